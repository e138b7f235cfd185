package io.fastblock.bench;

/** Counted I/Os of one direction (after the ramp): how many, how many bytes, and their latencies. */
public final class DirectionStats {
    private final LatencyHistogram latency = new LatencyHistogram();
    private long ios;
    private long bytes;

    void record(int length, long latencyNanos) {
        ios++;
        bytes += length;
        latency.record(latencyNanos);
    }

    void add(DirectionStats other) {
        ios += other.ios;
        bytes += other.bytes;
        latency.add(other.latency);
    }

    public long ios() {
        return ios;
    }

    public long bytes() {
        return bytes;
    }

    public LatencyHistogram latency() {
        return latency;
    }
}
