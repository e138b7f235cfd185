package io.fastblock.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * Answer to a request. {@code data} holds read data (empty otherwise) and is owned by the receiver.
 * {@code message} explains a non-OK status for logs and operators.
 */
public record StorageResponse(long requestId, OpCode op, Status status, String message, ByteBuf data)
        implements StorageMessage {

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
