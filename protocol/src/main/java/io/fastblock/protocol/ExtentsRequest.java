package io.fastblock.protocol;

/**
 * Asks for the allocated ranges of {@code [offset, offset + length)} of a chunk on the receiving
 * replica (any member answers). Answer data: an encoded {@link Extents}.
 */
public record ExtentsRequest(long requestId, ChainAddress chain, ChunkId chunk, long offset, int length)
        implements StorageMessage {
    @Override
    public OpCode op() {
        return OpCode.EXTENTS;
    }
}
