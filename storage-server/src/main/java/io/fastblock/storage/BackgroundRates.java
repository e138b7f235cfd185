package io.fastblock.storage;

/**
 * How much disk and network a server's background work may take: catch-up and resync copies
 * (one budget for the node, in bytes per second; 0 = unlimited), the log scrubber and the chunk
 * scrubber (bytes per second, 0 = off, and the pause between their passes).
 */
public record BackgroundRates(long copyBytesPerSecond, long logScrubBytesPerSecond, long logScrubPauseMillis,
                              long scrubBytesPerSecond, long scrubPauseMillis) {
    /**
     * Copies at 128 MiB/s bring a 16 GiB member back in about two minutes while leaving most of a
     * disk to clients; each scrubber verifies about 30 GiB an hour (the chunk scrubber's figures are
     * {@link io.fastblock.storage.integrity.NodeIntegrity.Settings#DEFAULTS}').
     */
    public static final BackgroundRates DEFAULTS = new BackgroundRates(128L << 20, 8L << 20, 600_000,
            io.fastblock.storage.integrity.NodeIntegrity.Settings.DEFAULTS.scrubBytesPerSecond(),
            io.fastblock.storage.integrity.NodeIntegrity.Settings.DEFAULTS.scrubPause().toMillis());

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
        if (scrubBytesPerSecond < 0) {
            throw new IllegalArgumentException("--scrub-rate must not be negative, got " + scrubBytesPerSecond);
        }
        if (scrubPauseMillis < 0) {
            throw new IllegalArgumentException("--scrub-pause-ms must not be negative, got " + scrubPauseMillis);
        }
    }

    /** Copy and log-scrub rates as given, the chunk scrubber at its defaults. */
    public BackgroundRates(long copyBytesPerSecond, long logScrubBytesPerSecond, long logScrubPauseMillis) {
        this(copyBytesPerSecond, logScrubBytesPerSecond, logScrubPauseMillis, DEFAULTS.scrubBytesPerSecond(),
                DEFAULTS.scrubPauseMillis());
    }

    public boolean logScrub() {
        return logScrubBytesPerSecond > 0;
    }

    /** Whether the chunk scrubber runs. */
    public boolean scrub() {
        return scrubBytesPerSecond > 0;
    }
}
