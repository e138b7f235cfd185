package io.fastblock.protocol;

/**
 * Read {@code length} bytes at {@code offset} of a chunk from the receiving tail's copy, for a
 * node catching up as the group's joining member. Unlike {@link ReadRequest} it is served only by
 * the tail and is not subject to the volume's lease fence (the joiner holds no lease).
 */
public record CopyReadRequest(long requestId, ChainAddress chain, ChunkId chunk, long offset, int length)
        implements StorageMessage {
    @Override
    public OpCode op() {
        return OpCode.COPY_READ;
    }
}
