package io.fastblock.storage.io;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Opens {@link FileIo}s and syncs directories. The production factory is {@link #real()}; tests
 * pass a fault-injecting one to simulate power loss. Stores take a factory in their constructor
 * and use it for every file they own (chunk files, checksum sidecars, log segments, small state
 * files), so one factory covers everything a node keeps on disk except RocksDB.
 */
public interface FileIoFactory {
    /** Opens {@code file} for reading and writing, creating it (but not its parent directories) if {@code create}. */
    FileIo open(Path file, boolean create) throws IOException;

    /**
     * Makes the directory's entries durable: a file created (or renamed, or deleted) in it
     * survives a power loss only after this.
     */
    void syncDirectory(Path dir) throws IOException;

    /** The factory over real files ({@link RealFileIo}). */
    static FileIoFactory real() {
        return RealFileIo.FACTORY;
    }
}
