package io.fastblock.bench.chain;

import io.fastblock.storage.StorageServer;
import io.micrometer.core.instrument.Timer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * Mean write latency per chain position over one run, from each server's own meters: where a
 * write spends its time (the head's figure includes the middle's, which includes the tail's).
 */
final class RoleLatency {
    private static final String[] ROLES = {"head", "middle", "tail"};
    private final List<Timer> timers = new ArrayList<>();
    private final double[] count0;
    private final double[] total0;

    RoleLatency(List<StorageServer> chain) {
        for (int i = 0; i < chain.size() && i < ROLES.length; i++) {
            timers.add(chain.get(i).chainMetrics().latency("write", ROLES[i]));
        }
        count0 = new double[timers.size()];
        total0 = new double[timers.size()];
        for (int i = 0; i < timers.size(); i++) {
            count0[i] = timers.get(i).count();
            total0[i] = timers.get(i).totalTime(TimeUnit.MICROSECONDS);
        }
    }

    /** "write mean µs head X middle Y tail Z" since construction. */
    String since() {
        StringBuilder b = new StringBuilder("write mean µs");
        for (int i = 0; i < timers.size(); i++) {
            double n = timers.get(i).count() - count0[i];
            double t = timers.get(i).totalTime(TimeUnit.MICROSECONDS) - total0[i];
            b.append(String.format(Locale.ROOT, " %s %.0f", ROLES[i], n == 0 ? 0 : t / n));
        }
        return b.toString();
    }
}
