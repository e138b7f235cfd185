package io.fastblock.storage.io;

import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Real files whose reads are counted, those through O_DIRECT handles ({@link #openDirectReads}) apart
 * from those through the page cache, for tests of what background readers read around the cache.
 */
public final class ReadCountingFiles extends ForwardingFileIoFactory {
    /** Bytes read through handles from {@link #openDirectReads}. */
    public final AtomicLong directBytes = new AtomicLong();
    /** Bytes read through handles from {@link #open}. */
    public final AtomicLong bufferedBytes = new AtomicLong();
    /** Bytes read through handles from {@link #openNoReadahead}. */
    public final AtomicLong noReadaheadBytes = new AtomicLong();
    private final boolean directReads;

    private ReadCountingFiles(boolean directReads) {
        super(FileIoFactory.real());
        this.directReads = directReads;
    }

    /**
     * Over real files in {@code dir}, which must take O_DIRECT reads (a disk, not tmpfs); with
     * {@code directReads} false, {@link #openDirectReads} has none to give, as on such a filesystem.
     */
    public static ReadCountingFiles in(Path dir, boolean directReads) throws IOException {
        Path probe = Files.createTempFile(dir, "probe", "");
        try (FileIo d = FileIoFactory.real().openDirectReads(probe)) {
            assertNotNull(d, "the test directory's filesystem takes O_DIRECT reads (tests run on a disk, not tmpfs)");
        } finally {
            Files.delete(probe);
        }
        return new ReadCountingFiles(directReads);
    }

    @Override
    public FileIo open(Path file, boolean create) throws IOException {
        return counted(to.open(file, create), bufferedBytes, 1);
    }

    @Override
    public FileIo openDirectReads(Path file) throws IOException {
        FileIo d = directReads ? to.openDirectReads(file) : null;
        return d == null ? null : counted(d, directBytes, d.writeAlignment());
    }

    @Override
    public FileIo openNoReadahead(Path file) throws IOException {
        FileIo r = to.openNoReadahead(file);
        return r == null ? null : counted(r, noReadaheadBytes, 1);
    }

    private static FileIo counted(FileIo io, AtomicLong bytes, int alignment) {
        return new ForwardingFileIo(io) {
            @Override
            public int read(ByteBuffer dst, long position) throws IOException {
                int n = super.read(dst, position);
                bytes.addAndGet(Math.max(0, n));
                return n;
            }

            @Override
            public int writeAlignment() {
                return alignment;
            }
        };
    }
}
