package io.fastblock.storage.log;

import io.fastblock.storage.io.FileSystemSpace;
import java.io.IOException;

/**
 * Free space of the log's filesystem against a reserve. Foreground appends may not eat into the
 * reserve; the cleaner's moved records may, because cleaning is how a full log gets space back.
 */
final class DiskSpace {
    private final FileSystemSpace fs;
    private volatile long reserved;

    DiskSpace(FileSystemSpace fs, long reserved) {
        this.fs = fs;
        this.reserved = reserved;
    }

    long reserved() {
        return reserved;
    }

    void reserved(long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("reserved space must be >= 0, got " + bytes);
        }
        reserved = bytes;
    }

    long usable() throws IOException {
        return fs.usable();
    }

    /** Usable / total bytes of the filesystem (1.0 when its size is unknown). */
    double freeRatio() throws IOException {
        return fs.freeRatio();
    }

    /** Throws {@link NoSpaceException} if writing {@code bytes} more would leave less than the reserve free. */
    void check(long bytes) throws IOException {
        long r = reserved;
        if (r == 0) {
            return;
        }
        long free = usable();
        if (free - bytes < r) {
            throw new NoSpaceException("log disk is full: " + free + " bytes free, " + bytes + " to write, "
                    + r + " reserved");
        }
    }
}
