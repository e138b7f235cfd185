package io.fastblock.storage.io;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Size and free bytes of the filesystem a directory lives on. The log and the node's space reports
 * to the namenode ask the server's {@link FileIoFactory} for this view rather than the filesystem
 * itself, so they see one disk, and a test decides how full it is instead of inheriting the state
 * of the machine it runs on.
 */
public interface FileSystemSpace {
    /** Bytes this process may still write (what {@link FileStore#getUsableSpace} reports). */
    long usable() throws IOException;

    /** The filesystem's size in bytes; 0 or less when unknown. */
    long total() throws IOException;

    /** Usable / total (1.0 when the size is unknown). */
    default double freeRatio() throws IOException {
        long total = total();
        return total <= 0 ? 1.0 : (double) usable() / total;
    }

    /** The real filesystem {@code dir} is on. */
    static FileSystemSpace of(Path dir) throws IOException {
        FileStore store = Files.getFileStore(dir);
        return new FileSystemSpace() {
            @Override
            public long usable() throws IOException {
                return store.getUsableSpace();
            }

            @Override
            public long total() throws IOException {
                return store.getTotalSpace();
            }

            @Override
            public String toString() {
                return "filesystem of " + dir;
            }
        };
    }
}
