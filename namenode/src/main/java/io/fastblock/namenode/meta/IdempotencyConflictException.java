package io.fastblock.namenode.meta;

import io.fastblock.protocol.meta.VolumeRecord;

/** A create repeated a client id that an earlier, different create already used. */
public class IdempotencyConflictException extends RuntimeException {
    public IdempotencyConflictException(String clientId, VolumeRecord earlier) {
        super("id '" + clientId + "' was already used to create volume '" + earlier.name() + "' (size "
                + earlier.size() + ", chunkSize " + earlier.chunkSize() + ", tenant " + earlier.tenant()
                + ") with a different request");
    }
}
