package io.fastblock.storage.chain;

/**
 * Bounds and timings of the replication layer.
 *
 * @param sentMaxWrites    most writes a group's sent list holds before admission waits
 * @param sentMaxBytes     most payload bytes a group's sent list holds before admission waits
 * @param ackTimeoutMillis how long a write may wait for its successor's acknowledgement (across resends) before it fails
 * @param linkRetryMillis  after a failed forward with no chain change, wait this long before resending on a new connection
 * @param copyPieceBytes   size of one COPY_READ while catching up
 */
public record ChainLimits(int sentMaxWrites, long sentMaxBytes, long ackTimeoutMillis, long linkRetryMillis, int copyPieceBytes) {
    public static final ChainLimits DEFAULTS = new ChainLimits(1024, 64L << 20, 30_000, 250, 1 << 20);

    public ChainLimits {
        if (sentMaxWrites < 1 || sentMaxBytes < 1 || ackTimeoutMillis < 1 || linkRetryMillis < 1 || copyPieceBytes < 4096) {
            throw new IllegalArgumentException("bad chain limits " + sentMaxWrites + "/" + sentMaxBytes + "/" + ackTimeoutMillis
                    + "/" + linkRetryMillis + "/" + copyPieceBytes);
        }
    }

    /** The applied window covers every write a predecessor can still resend. */
    int appliedWindow() {
        return Math.max(4096, sentMaxWrites * 4);
    }
}
