package io.fastblock.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * Write {@code data} at {@code offset} within a chunk, or (with {@link #FLAG_TRIM}) give back the
 * range {@code [offset, offset + trimLength)}. The gateway sends it to the head, which forwards it
 * down the chain; {@code sequence} is 0 from the gateway and assigned by the head. A trim travels
 * exactly like a write (ordered, sequenced, resent, fenced) but carries no data bytes: afterwards
 * the range reads as zeros and is no longer allocated. The receiver owns {@code data} and must
 * release it.
 */
public record WriteRequest(long requestId, int flags, ChainAddress chain, ChunkId chunk, long offset,
                           long sequence, ByteBuf data, int trimLength, long answerTo, long answerId)
        implements StorageMessage {
    /** Set by a replica forwarding the write to its successor. */
    public static final int FLAG_FORWARDED = 0x01;
    /** The request is a trim: no data, {@link #length()} is the length of the range given back. */
    public static final int FLAG_TRIM = 0x02;
    /**
     * The client asks the tail to send its OK straight back to it, on the connection registered for
     * client {@link #answerTo} ({@link AnswerToRequest}), under request id {@link #answerId}, as chain
     * replication's tail answers its client. The chain's own answers still flow back to the head.
     */
    public static final int FLAG_ANSWER_DIRECT = 0x04;

    public WriteRequest {
        if (((flags & FLAG_ANSWER_DIRECT) != 0) != (answerTo != 0)) {
            throw new IllegalArgumentException("FLAG_ANSWER_DIRECT goes with a client id to answer, got flags 0x"
                    + Integer.toHexString(flags) + " and client id " + answerTo);
        }
        if ((flags & FLAG_TRIM) != 0) {
            if (data.isReadable()) {
                throw new IllegalArgumentException("a trim carries no data, got " + data.readableBytes() + " bytes");
            }
            if (trimLength < 0) {
                throw new IllegalArgumentException("negative trim length " + trimLength);
            }
        } else if (trimLength != 0) {
            throw new IllegalArgumentException("trim length " + trimLength + " on a write without FLAG_TRIM");
        }
    }

    public WriteRequest(long requestId, int flags, ChainAddress chain, ChunkId chunk, long offset, long sequence,
                        ByteBuf data, int trimLength) {
        this(requestId, flags, chain, chunk, offset, sequence, data, trimLength, 0, 0);
    }

    /** A write of {@code data} (the usual case). */
    public WriteRequest(long requestId, int flags, ChainAddress chain, ChunkId chunk, long offset, long sequence,
                        ByteBuf data) {
        this(requestId, flags, chain, chunk, offset, sequence, data, 0);
    }

    /** A trim of {@code [offset, offset + length)} as a client sends it (sequence 0: the head assigns it). */
    public static WriteRequest trim(long requestId, ChainAddress chain, ChunkId chunk, long offset, int length) {
        return new WriteRequest(requestId, FLAG_TRIM, chain, chunk, offset, 0, Unpooled.EMPTY_BUFFER, length);
    }

    @Override
    public OpCode op() {
        return OpCode.WRITE;
    }

    /** Bytes written, or for a trim the length of the range given back. */
    public int length() {
        return isTrim() ? trimLength : data.readableBytes();
    }

    public boolean isTrim() {
        return (flags & FLAG_TRIM) != 0;
    }

    public boolean forwarded() {
        return (flags & FLAG_FORWARDED) != 0;
    }

    public boolean answerDirect() {
        return (flags & FLAG_ANSWER_DIRECT) != 0;
    }

    /** The same request asking the tail to answer client {@code client} directly under {@code id}. */
    public WriteRequest answeredDirectlyTo(long client, long id) {
        return new WriteRequest(requestId, flags | FLAG_ANSWER_DIRECT, chain, chunk, offset, sequence, data, trimLength,
                client, id);
    }

    /** The same request under another request id (a connection's own). */
    public WriteRequest withRequestId(long id) {
        return new WriteRequest(id, flags, chain, chunk, offset, sequence, data, trimLength, answerTo, answerId);
    }

    public WriteRequest forward(long newRequestId, long assignedSequence, ByteBuf sameData) {
        return new WriteRequest(newRequestId, flags | FLAG_FORWARDED, chain, chunk, offset, assignedSequence, sameData,
                trimLength, answerTo, answerId);
    }
}
