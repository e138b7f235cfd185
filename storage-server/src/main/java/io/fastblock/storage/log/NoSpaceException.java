package io.fastblock.storage.log;

import java.io.IOException;

/**
 * A log append refused because the disk is full: the filesystem said so, or free space fell
 * below the store's reserve. Nothing already written is affected and the store keeps serving;
 * appends succeed again once space returns. Replica logic answers it with {@code Status.NO_SPACE}.
 */
public final class NoSpaceException extends IOException {
    private static final long serialVersionUID = 1L;

    public NoSpaceException(String message) {
        super(message);
    }

    public NoSpaceException(String message, Throwable cause) {
        super(message, cause);
    }

    /** True if {@code e} is the filesystem's "no space left on device" (ENOSPC) or "quota exceeded" (EDQUOT). */
    static boolean isNoSpace(IOException e) {
        String m = e.getMessage();
        return e instanceof NoSpaceException || m != null && (m.contains("No space left on device") || m.contains("Disk quota exceeded"));
    }
}
