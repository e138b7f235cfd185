package io.fastblock.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * Answer to a request. {@code data} holds read data (empty otherwise) and is owned by the receiver.
 * {@code message} explains a non-OK status for logs and operators.
 */
public record StorageResponse(long requestId, OpCode op, Status status, String message, ByteBuf data, int flags)
        implements StorageMessage {
    /**
     * On a write's OK: the tail has also sent the OK straight to the client that asked for it
     * ({@link WriteRequest#FLAG_ANSWER_DIRECT}); the head need not send its own.
     */
    public static final int FLAG_ANSWERED = 0x01;

    public StorageResponse(long requestId, OpCode op, Status status, String message, ByteBuf data) {
        this(requestId, op, status, message, data, 0);
    }

    public boolean answered() {
        return (flags & FLAG_ANSWERED) != 0;
    }

    /** The same answer with {@link #FLAG_ANSWERED} set. */
    public StorageResponse withAnswered() {
        return new StorageResponse(requestId, op, status, message, data, flags | FLAG_ANSWERED);
    }

    public static StorageResponse ok(long requestId, OpCode op) {
        return new StorageResponse(requestId, op, Status.OK, "", Unpooled.EMPTY_BUFFER);
    }

    public static StorageResponse ok(long requestId, OpCode op, ByteBuf data) {
        return new StorageResponse(requestId, op, Status.OK, "", data);
    }

    public static StorageResponse error(long requestId, OpCode op, Status status, String message) {
        return new StorageResponse(requestId, op, status, message == null ? "" : message, Unpooled.EMPTY_BUFFER);
    }

    public boolean isOk() {
        return status == Status.OK;
    }
}
