package io.fastblock.storage.io;

/**
 * Paces background work to a byte rate: {@link #acquire} sleeps the caller, {@link #delayNanos}
 * tells an asynchronous caller how long to wait before its next piece. Shared safely by several
 * callers (their bytes count against one budget).
 */
public final class ByteRateLimiter {
    private final long bytesPerSecond;
    private long start = -1;
    private long granted;

    /** @param bytesPerSecond 0 or less means unlimited */
    public ByteRateLimiter(long bytesPerSecond) {
        this.bytesPerSecond = bytesPerSecond;
    }

    public long bytesPerSecond() {
        return bytesPerSecond;
    }

    /** Accounts for {@code bytes} of work and sleeps until the rate allows it. */
    public void acquire(long bytes) throws InterruptedException {
        long wait = delayNanos(bytes);
        if (wait > 0) {
            Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
        }
    }

    /** Accounts for {@code bytes} of work and returns how long to wait (nanoseconds) before doing it. */
    public synchronized long delayNanos(long bytes) {
        if (bytesPerSecond <= 0) {
            return 0;
        }
        long now = System.nanoTime();
        if (start < 0 || now - start > 10_000_000_000L) {
            // A long idle gap earns no burst: restart the window.
            start = now;
            granted = 0;
        }
        granted += bytes;
        long dueNanos = (long) (granted * 1e9 / bytesPerSecond);
        return Math.max(0, dueNanos - (now - start));
    }
}
