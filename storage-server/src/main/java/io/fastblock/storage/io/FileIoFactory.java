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
     * Opens an existing file for writes that bypass the page cache (O_DIRECT), or returns null where
     * this layer or the file's filesystem cannot. Such a write reaches the device without a copy into
     * the page cache, and the kernel has no dirty pages of it to write back at the next fsync; it is
     * still durable only after {@link FileIo#force} (of any handle on the file). Its position, length
     * and buffer address must be multiples of the handle's {@link FileIo#writeAlignment}. Reads go
     * through a handle from {@link #open}: the kernel drops cached pages a direct write overwrites.
     * The caller must not also write the same blocks through the page cache (a dirty cached page
     * written back later would undo the direct write).
     */
    default FileIo openDirect(Path file) throws IOException {
        return null;
    }

    /**
     * Opens an existing file for reads that bypass the page cache (O_DIRECT), or returns null where
     * this layer or the file's filesystem cannot. Such a read returns what the device holds: the
     * kernel first writes back the range's dirty cached pages, so it also sees every completed
     * write, and it neither fills the cache nor sizes cached folios. Positions, lengths and buffer
     * addresses must be multiples of the handle's {@link FileIo#writeAlignment}, reads included; a
     * read that reaches the end of the file returns fewer bytes. The scrubber reads this way: a check
     * of a cached copy would say nothing about the disk it is there to check.
     */
    default FileIo openDirectReads(Path file) throws IOException {
        return null;
    }

    /**
     * A read-only handle on {@code file} on which the kernel reads nothing ahead (see
     * {@link NoReadaheadFileIo}), for small reads of a file that is also written in place in
     * small pieces; null where there is none (the caller reads through its own handle).
     */
    default FileIo openNoReadahead(Path file) throws IOException {
        return null;
    }

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

    /** The size and free space of the filesystem {@code dir} is on. */
    default FileSystemSpace space(Path dir) throws IOException {
        return FileSystemSpace.of(dir);
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

    /** The factory over real files ({@link RealFileIo}); direct writes where the filesystem takes them. */
    static FileIoFactory real() {
        return RealFileIo.FACTORY;
    }

    /** {@code files} with {@link #openDirect} turned off: every write goes through the page cache. */
    static FileIoFactory withoutDirectWrites(FileIoFactory files) {
        return new ForwardingFileIoFactory(files) {
            @Override
            public FileIo openDirect(Path file) {
                return null;
            }

            @Override
            public String toString() {
                return files + " without direct writes";
            }
        };
    }
}
