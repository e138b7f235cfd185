package io.fastblock.storage;

/**
 * How much disk and network a server's background work may take: catch-up and resync copies
 * (one budget for the node, in bytes per second; 0 = unlimited) and the log scrubber (bytes
 * per second, 0 = off, and the pause between its passes).
 */
public record BackgroundRates(long copyBytesPerSecond, long logScrubBytesPerSecond, long logScrubPauseMillis) {
    /**
     * Copies at 128 MiB/s bring a 16 GiB member back in about two minutes while leaving most of a
     * disk to clients; the log scrubber verifies about 30 GiB an hour, like the chunk scrubber.
     */
    public static final BackgroundRates DEFAULTS = new BackgroundRates(128L << 20, 8L << 20, 600_000);

    public BackgroundRates {
        if (copyBytesPerSecond < 0) {
            throw new IllegalArgumentException("--copy-rate must not be negative, got " + copyBytesPerSecond);
        }
        if (logScrubBytesPerSecond < 0) {
            throw new IllegalArgumentException("--log-scrub-rate must not be negative, got " + logScrubBytesPerSecond);
        }
        if (logScrubPauseMillis < 0) {
            throw new IllegalArgumentException("--log-scrub-pause-ms must not be negative, got " + logScrubPauseMillis);
        }
    }

    public boolean logScrub() {
        return logScrubBytesPerSecond > 0;
    }
}
