package io.fastblock.gateway.qos;

/**
 * One rate limit as a generic cell rate algorithm (a token bucket kept as a "theoretical arrival
 * time"): a cost of {@code c} units moves the TAT {@code c / rate} seconds on; a request conforms
 * when now is no earlier than TAT minus the tolerance, the time the small bucket of
 * {@code burst} units takes to fill. Admitting late never loses credit while requests wait (the
 * TAT runs ahead of the clock), so a backlogged volume gets exactly the rate over time, and never
 * more than rate x time + burst. Not thread-safe: {@link VolumeThrottle} serialises it.
 */
final class RateBucket {
    private final double nanosPerUnit;
    private final long toleranceNanos;
    private long tat;

    /** {@code rate} units per second (> 0), a bucket of {@code burst} units (>= 1), starting full at {@code now}. */
    RateBucket(long rate, long burst, long now) {
        if (rate <= 0 || burst < 1) {
            throw new IllegalArgumentException("rate " + rate + " burst " + burst);
        }
        this.nanosPerUnit = 1e9 / rate;
        this.toleranceNanos = (long) (burst * nanosPerUnit);
        this.tat = now;
    }

    /** The earliest time (nanos, same clock as {@code now}) a request may start. */
    long earliest(long now) {
        return Math.max(now, tat - toleranceNanos);
    }

    /** Charges {@code cost} units to a request starting at {@code at} (from {@link #earliest}). */
    void charge(long at, long cost) {
        tat = Math.max(tat, at) + (long) Math.ceil(cost * nanosPerUnit);
    }
}
