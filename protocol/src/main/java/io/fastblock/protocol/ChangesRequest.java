package io.fastblock.protocol;

/**
 * Asks the receiving tail which ranges of a chunk changed (were written or trimmed) by writes with
 * a sequence above {@code since}: a returning member that has everything up to {@code since}
 * copies only those. Answered with {@link ChunkChanges}; served only by the tail, outside the
 * lease fence, like {@link CopyReadRequest}.
 */
public record ChangesRequest(long requestId, ChainAddress chain, ChunkId chunk, long since) implements StorageMessage {
    @Override
    public OpCode op() {
        return OpCode.CHANGES;
    }
}
