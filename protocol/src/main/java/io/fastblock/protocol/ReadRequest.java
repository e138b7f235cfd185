package io.fastblock.protocol;

/** Read {@code length} bytes at {@code offset} within a chunk from the receiving replica's own copy. */
public record ReadRequest(long requestId, ChainAddress chain, ChunkId chunk, long offset, int length)
        implements StorageMessage {
    @Override
    public OpCode op() {
        return OpCode.READ;
    }
}
