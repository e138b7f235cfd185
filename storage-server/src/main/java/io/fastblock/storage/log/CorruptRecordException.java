package io.fastblock.storage.log;

import java.io.IOException;

/** A log record read from disk failed its CRC32C check or is not a record at all. */
public final class CorruptRecordException extends IOException {
    private static final long serialVersionUID = 1L;

    public CorruptRecordException(String message) {
        super(message);
    }
}
