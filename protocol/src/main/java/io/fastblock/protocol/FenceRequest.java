package io.fastblock.protocol;

/**
 * Raises the receiving server's lease-epoch floor for {@code volumeId} to {@code epoch} (never
 * lowers it): writes and trims with a lower epoch are refused with {@link Status#STALE_EPOCH}.
 * {@link #SEALED} admits no write or trim at all any more. The OK answer comes only once every
 * write or trim for the volume id admitted before the fence has completed. Server-wide: no chain.
 */
public record FenceRequest(long requestId, long volumeId, long epoch) implements StorageMessage {
    /** The epoch that seals a volume id: reads only from then on. */
    public static final long SEALED = Long.MAX_VALUE;

    public FenceRequest {
        if (volumeId < 0 || epoch < 0) {
            throw new IllegalArgumentException("fence of volume " + volumeId + " at epoch " + epoch
                    + ": both must be >= 0");
        }
    }

    @Override
    public OpCode op() {
        return OpCode.FENCE;
    }
}
