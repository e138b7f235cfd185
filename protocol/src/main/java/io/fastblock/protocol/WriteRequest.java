package io.fastblock.protocol;

import io.netty.buffer.ByteBuf;

/**
 * Write {@code data} at {@code offset} within a chunk. The gateway sends it to the head, which
 * forwards it down the chain; {@code sequence} is 0 from the gateway and assigned by the head.
 * The receiver owns {@code data} and must release it.
 */
public record WriteRequest(long requestId, int flags, ChainAddress chain, ChunkId chunk, long offset,
                           long sequence, ByteBuf data) implements StorageMessage {
    /** Set by a replica forwarding the write to its successor. */
    public static final int FLAG_FORWARDED = 0x01;

    @Override
    public OpCode op() {
        return OpCode.WRITE;
    }

    public int length() {
        return data.readableBytes();
    }

    public boolean forwarded() {
        return (flags & FLAG_FORWARDED) != 0;
    }

    public WriteRequest forward(long newRequestId, long assignedSequence, ByteBuf sameData) {
        return new WriteRequest(newRequestId, flags | FLAG_FORWARDED, chain, chunk, offset, assignedSequence, sameData);
    }
}
