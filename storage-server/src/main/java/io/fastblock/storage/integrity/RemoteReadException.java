package io.fastblock.storage.integrity;

import io.fastblock.protocol.Status;
import java.io.IOException;

/** Another replica refused or failed a read; carries its status. */
public final class RemoteReadException extends IOException {
    private static final long serialVersionUID = 1L;
    private final Status status;

    public RemoteReadException(Status status, String message) {
        super(message);
        this.status = status;
    }

    public Status status() {
        return status;
    }
}
