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

    /**
     * Deletes a file if it exists (its removal survives a power loss once the directory is synced).
     * Goes through the factory so a fault-injecting disk forgets the file's unforced history.
     */
    default boolean delete(Path file) throws IOException {
        return java.nio.file.Files.deleteIfExists(file);
    }

    /**
     * Atomically puts {@code from} in place of {@code to} (replacing it); the new name survives a
     * power loss once the directory is synced. Goes through the factory so a fault-injecting disk
     * moves the file's history with it.
     */
    default void rename(Path from, Path to) throws IOException {
        java.nio.file.Files.move(from, to, java.nio.file.StandardCopyOption.ATOMIC_MOVE,
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }

    /**
     * Identifies the current boot of the machine: while it is unchanged the page cache has not
     * been lost, so a restart after a process crash finds every completed write in its files.
     * Linux's {@code /proc/sys/kernel/random/boot_id}; empty where there is none (treated as a new boot).
     */
    default String bootId() {
        try {
            return java.nio.file.Files.readString(java.nio.file.Path.of("/proc/sys/kernel/random/boot_id")).trim();
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }

    /** The factory over real files ({@link RealFileIo}). */
    static FileIoFactory real() {
        return RealFileIo.FACTORY;
    }
}
