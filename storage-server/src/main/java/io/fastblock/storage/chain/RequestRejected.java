package io.fastblock.storage.chain;

import io.fastblock.protocol.Status;

/** A request refused before any data was touched, with the status to answer. */
final class RequestRejected extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final Status status;

    RequestRejected(Status status, String message) {
        super(message, null, false, false);
        this.status = status;
    }
}
