package io.fastblock.storage.log;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The rate of a growing byte count (the log's foreground appends), measured over windows of at
 * least {@link #WINDOW_NANOS}: asked more often, it answers the last window's rate, so a caller
 * checking between small batches does not see a burst or a gap of a few milliseconds as the load.
 * Used by one thread (the cleaner's).
 */
final class AppendRate {
    static final long WINDOW_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    private final LongSupplier bytes;
    private final LongSupplier clock;
    private long lastBytes;
    private long lastNanos;
    private double perSecond;

    AppendRate(LongSupplier bytes, LongSupplier clock) {
        this.bytes = bytes;
        this.clock = clock;
        this.lastBytes = bytes.getAsLong();
        this.lastNanos = clock.getAsLong();
    }

    /** Bytes per second over the last full window (0 until one has passed). */
    double perSecond() {
        long now = clock.getAsLong();
        long elapsed = now - lastNanos;
        if (elapsed >= WINDOW_NANOS) {
            long b = bytes.getAsLong();
            perSecond = (b - lastBytes) * (double) TimeUnit.SECONDS.toNanos(1) / elapsed;
            lastBytes = b;
            lastNanos = now;
        }
        return perSecond;
    }
}
