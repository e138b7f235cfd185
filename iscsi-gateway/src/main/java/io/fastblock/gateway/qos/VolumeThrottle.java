package io.fastblock.gateway.qos;

import io.fastblock.gateway.scsi.IoAdmission;
import io.fastblock.protocol.meta.QosSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * A volume's QoS limits (Cinder's total/read/write IOPS and bytes per second; 0 = unlimited)
 * enforced on the commands of every session using the volume on this gateway. Each limit is a
 * {@link RateBucket}; a command starts when every limit that applies to it admits it, in arrival
 * order, and is charged to all of them. The buckets hold {@link #BURST_NANOS} worth of credit
 * (at least one command), so no burst goes beyond the limit by more than that. New limits (from
 * the namenode's volume record) apply to commands arriving from then on.
 */
public final class VolumeThrottle implements IoAdmission {
    /** The small bucket: 20 ms of the limit. */
    static final long BURST_NANOS = 20_000_000L;

    private final LongSupplier clock;
    private final Scheduler scheduler;
    private QosSpec spec = QosSpec.UNLIMITED;
    private RateBucket totalIops;
    private RateBucket readIops;
    private RateBucket writeIops;
    private RateBucket totalBytes;
    private RateBucket readBytes;
    private RateBucket writeBytes;
    private volatile boolean unlimited = true;

    /** Runs {@code task} after {@code delayNanos}; the real one is a scheduled executor. */
    public interface Scheduler {
        void schedule(Runnable task, long delayNanos);
    }

    public VolumeThrottle(LongSupplier nanoClock, Scheduler scheduler) {
        this.clock = nanoClock;
        this.scheduler = scheduler;
    }

    public VolumeThrottle(ScheduledExecutorService executor) {
        this(System::nanoTime, (task, delay) -> executor.schedule(task, delay, TimeUnit.NANOSECONDS));
    }

    /** Applies {@code next}; unchanged limits keep their buckets (and their state). */
    public synchronized void update(QosSpec next) {
        if (next.equals(spec)) {
            return;
        }
        long now = clock.getAsLong();
        totalIops = bucket(totalIops, spec.totalIopsSec(), next.totalIopsSec(), now);
        readIops = bucket(readIops, spec.readIopsSec(), next.readIopsSec(), now);
        writeIops = bucket(writeIops, spec.writeIopsSec(), next.writeIopsSec(), now);
        totalBytes = bucket(totalBytes, spec.totalBytesSec(), next.totalBytesSec(), now);
        readBytes = bucket(readBytes, spec.readBytesSec(), next.readBytesSec(), now);
        writeBytes = bucket(writeBytes, spec.writeBytesSec(), next.writeBytesSec(), now);
        spec = next;
        unlimited = next.unlimited();
    }

    /**
     * The bucket for a limit: none for 0, the old one when the limit did not change, else a new one
     * holding {@link #BURST_NANOS} of the limit (at least one unit; a command costing more than the
     * bucket holds simply waits its cost out).
     */
    private static RateBucket bucket(RateBucket old, long was, long limit, long now) {
        if (limit == 0) {
            return null;
        }
        if (limit == was && old != null) {
            return old;
        }
        long burst = Math.max(1, limit * BURST_NANOS / 1_000_000_000L);
        return new RateBucket(limit, burst, now);
    }

    public synchronized QosSpec spec() {
        return spec;
    }

    @Override
    public boolean unlimited() {
        return unlimited;
    }

    /** How long (nanos) a command arriving now waits; charges it. Separate from {@link #admit} for tests. */
    synchronized long reserve(boolean read, long bytes) {
        long now = clock.getAsLong();
        List<RateBucket> iops = new ArrayList<>(2);
        List<RateBucket> volume = new ArrayList<>(2);
        add(iops, totalIops);
        add(iops, read ? readIops : writeIops);
        add(volume, totalBytes);
        add(volume, read ? readBytes : writeBytes);
        long at = now;
        for (RateBucket b : iops) {
            at = Math.max(at, b.earliest(now));
        }
        for (RateBucket b : volume) {
            at = Math.max(at, b.earliest(now));
        }
        for (RateBucket b : iops) {
            b.charge(at, 1);
        }
        for (RateBucket b : volume) {
            b.charge(at, bytes);
        }
        return at - now;
    }

    private static void add(List<RateBucket> to, RateBucket b) {
        if (b != null) {
            to.add(b);
        }
    }

    @Override
    public CompletableFuture<Void> admit(boolean read, long bytes) {
        if (unlimited) {
            return CompletableFuture.completedFuture(null);
        }
        long wait = reserve(read, bytes);
        if (wait <= 0) {
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> go = new CompletableFuture<>();
        scheduler.schedule(() -> go.complete(null), wait);
        return go;
    }
}
