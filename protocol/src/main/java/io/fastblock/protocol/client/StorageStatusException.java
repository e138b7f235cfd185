package io.fastblock.protocol.client;

import io.fastblock.protocol.OpCode;
import io.fastblock.protocol.Status;
import java.io.IOException;

/** A storage server answered a request with a status other than OK. */
public class StorageStatusException extends IOException {
    private static final long serialVersionUID = 1L;

    private final Status status;

    public StorageStatusException(OpCode op, Status status, String message) {
        super(op + " answered " + status + (message == null || message.isEmpty() ? "" : ": " + message));
        this.status = status;
    }

    public Status status() {
        return status;
    }
}
