package io.fastblock.storage.io;

import java.nio.file.Path;

/**
 * A disk whose size and free bytes the test sets, so what a store decides from free space does not
 * depend on how full the machine's own disk happens to be.
 */
public final class SettableSpace implements FileSystemSpace {
    private final long total;
    private volatile long usable;

    public SettableSpace(long total, long usable) {
        this.total = total;
        this.usable = usable;
    }

    /** A 1 TiB disk, half free. */
    public static SettableSpace roomy() {
        return new SettableSpace(1L << 40, 1L << 39);
    }

    public void usable(long bytes) {
        usable = bytes;
    }

    @Override
    public long usable() {
        return usable;
    }

    @Override
    public long total() {
        return total;
    }

    /** {@code files}, with this as the space of every directory. */
    public FileIoFactory under(FileIoFactory files) {
        SettableSpace space = this;
        return new ForwardingFileIoFactory(files) {
            @Override
            public FileSystemSpace space(Path dir) {
                return space;
            }
        };
    }
}
