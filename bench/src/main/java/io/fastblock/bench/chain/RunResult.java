package io.fastblock.bench.chain;

/** What one timed run did: completed I/Os and bytes over the measured time, and latency percentiles. */
public record RunResult(long ios, long bytes, double seconds, long p50Micros, long p99Micros, long errors) {
    public double iops() {
        return seconds <= 0 ? 0 : ios / seconds;
    }

    /** 10^6 bytes per second, as fio's and the bench's reports. */
    public double megabytesPerSecond() {
        return seconds <= 0 ? 0 : bytes / seconds / 1e6;
    }
}
