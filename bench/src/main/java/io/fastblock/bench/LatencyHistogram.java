package io.fastblock.bench;

import java.util.Arrays;

/**
 * A log-linear histogram of latencies in nanoseconds: every power-of-two range is cut into 128
 * equal buckets, so a reported percentile is at most 1/128 (0.8 %) above the true value, with
 * values below 256 ns kept exactly. Fixed memory (35 KiB), O(1) recording, no allocation; not
 * thread-safe (one per event loop, merged at the end). Values above ~18 minutes are clamped.
 */
public final class LatencyHistogram {
    static final int SUB_BITS = 7;
    static final int SUB = 1 << SUB_BITS;
    static final int MAX_EXPONENT = 40;
    static final long MAX_VALUE = (1L << (MAX_EXPONENT + 1)) - 1;
    static final int BUCKETS = (MAX_EXPONENT - SUB_BITS + 2) * SUB;

    private final long[] counts = new long[BUCKETS];
    private long count;
    private long sum;
    private long min = Long.MAX_VALUE;
    private long max;

    static int index(long v) {
        if (v < 2 * SUB) {
            return (int) v;
        }
        int exponent = 63 - Long.numberOfLeadingZeros(v);
        int shift = exponent - SUB_BITS;
        return (shift + 1) * SUB + (int) ((v >>> shift) - SUB);
    }

    /** Highest value that falls into bucket {@code index}. */
    static long highestEquivalent(int index) {
        if (index < 2 * SUB) {
            return index;
        }
        int shift = index / SUB - 1;
        long sub = index % SUB + SUB;
        return ((sub + 1) << shift) - 1;
    }

    public void record(long nanos) {
        long v = Math.max(0, Math.min(nanos, MAX_VALUE));
        counts[index(v)]++;
        count++;
        sum += v;
        min = Math.min(min, v);
        max = Math.max(max, v);
    }

    public void add(LatencyHistogram other) {
        for (int i = 0; i < BUCKETS; i++) {
            counts[i] += other.counts[i];
        }
        count += other.count;
        sum += other.sum;
        min = Math.min(min, other.min);
        max = Math.max(max, other.max);
    }

    public long count() {
        return count;
    }

    public long max() {
        return max;
    }

    public long min() {
        return count == 0 ? 0 : min;
    }

    public double mean() {
        return count == 0 ? 0 : (double) sum / count;
    }

    /**
     * The value at {@code percentile} (0 < p <= 100): the smallest recorded value such that at least
     * p % of the values are at or below it, reported as its bucket's upper bound (never above the
     * maximum, never below the minimum). 0 when empty.
     */
    public long percentile(double percentile) {
        if (!(percentile > 0 && percentile <= 100)) {
            throw new IllegalArgumentException("percentile must be in (0, 100], got " + percentile);
        }
        if (count == 0) {
            return 0;
        }
        long rank = Math.max(1, (long) Math.ceil(percentile / 100.0 * count));
        long seen = 0;
        for (int i = 0; i < BUCKETS; i++) {
            seen += counts[i];
            if (seen >= rank) {
                return Math.max(min, Math.min(highestEquivalent(i), max));
            }
        }
        return max;
    }

    public void reset() {
        Arrays.fill(counts, 0);
        count = 0;
        sum = 0;
        min = Long.MAX_VALUE;
        max = 0;
    }
}
