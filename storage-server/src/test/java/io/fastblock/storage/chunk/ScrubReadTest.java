package io.fastblock.storage.chunk;

import static io.fastblock.storage.TestBuffers.random;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.io.FileIo;
import io.fastblock.storage.io.FileIoFactory;
import io.fastblock.storage.io.ForwardingFileIo;
import io.fastblock.storage.io.ForwardingFileIoFactory;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The scrub's check ({@link ChunkFile#verify}) reads the device's copy through an O_DIRECT handle,
 * on real files: it must still see every completed write (the kernel writes dirty pages back
 * first), find a flipped bit, read a file that ends inside a block, and leave the buffered handle
 * alone.
 */
class ScrubReadTest {
    private static final int BLOCK = ChunkFile.BLOCK;
    private static final ChunkId C = new ChunkId(7, 1);

    @TempDir
    Path dir;

    /** Bytes read through direct handles and through buffered ones, counted separately. */
    private final AtomicLong directBytes = new AtomicLong();
    private final AtomicLong bufferedBytes = new AtomicLong();
    private FileIoFactory files;

    @BeforeEach
    void counting() throws IOException {
        FileIo probe = FileIoFactory.real().openDirectReads(java.nio.file.Files.createFile(dir.resolve("probe")));
        assertNotNull(probe, "the test directory's filesystem takes O_DIRECT reads (tests run on a disk, not tmpfs)");
        probe.close();
        files = new ForwardingFileIoFactory(FileIoFactory.real()) {
            @Override
            public FileIo open(Path file, boolean create) throws IOException {
                return counted(to.open(file, create), bufferedBytes, 1);
            }

            @Override
            public FileIo openDirectReads(Path file) throws IOException {
                FileIo d = to.openDirectReads(file);
                return d == null ? null : counted(d, directBytes, d.writeAlignment());
            }
        };
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

    @Test
    void freshUnforcedWritesVerifyCleanThroughTheDeviceAndTheBufferedHandleIsNotRead() throws Exception {
        try (ChunkFile f = ChunkFile.open(C, dir.resolve("c"), files, true)) {
            f.write(0, new ByteBuffer[] {ByteBuffer.wrap(random(64 * BLOCK, 1))});
            // Rewritten in place and never forced: only the page cache has these bytes until the check.
            f.write(5L * BLOCK + 100, new ByteBuffer[] {ByteBuffer.wrap(random(3 * BLOCK, 2))});
            bufferedBytes.set(0);
            assertEquals(List.of(), f.verify(0, 64, files));
            assertEquals(List.of(), f.verify(3, 5, files), "a range that starts inside the file");
            assertEquals(0, bufferedBytes.get(), "the check reads nothing through the page cache");
            assertEquals((64 + 5) * (long) BLOCK, directBytes.get(), "every block checked came from the device");
        }
    }

    @Test
    void aBitFlippedOnTheDeviceIsFoundAndNamed() throws Exception {
        Path file = dir.resolve("c");
        try (ChunkFile f = ChunkFile.open(C, file, files, true)) {
            f.write(0, new ByteBuffer[] {ByteBuffer.wrap(random(16 * BLOCK, 3))});
            f.force();
            ChunkChecksumTest.flipBit(file, 9L * BLOCK + 4000);
            assertEquals(List.of(new BlockRange(9L * BLOCK, BLOCK)), f.verify(0, 16, files));
            assertEquals(List.of(new BlockRange(9L * BLOCK, BLOCK)), f.verify(8, 2, files));
            assertEquals(List.of(), f.verify(10, 6, files));
        }
    }

    @Test
    void aFileEndingInsideABlockReadsAsZerosPastItsEnd() throws Exception {
        try (ChunkFile f = ChunkFile.open(C, dir.resolve("c"), files, true)) {
            // 3 blocks and 512 bytes: the last block is a 512-byte sector followed by the end of the file.
            f.write(0, new ByteBuffer[] {ByteBuffer.wrap(random(3 * BLOCK + 512, 4))});
            assertEquals(3L * BLOCK + 512, f.size());
            assertEquals(List.of(), f.verify(0, 4, files));
            assertEquals(List.of(), f.verify(2, 6, files), "blocks wholly past the end are zeros, as unwritten blocks are");
            assertTrue(directBytes.get() > 0);
        }
    }

    @Test
    void withoutDirectReadsTheCheckGoesThroughThePageCache() throws Exception {
        FileIoFactory plain = new ForwardingFileIoFactory(files) {
            @Override
            public FileIo openDirectReads(Path file) {
                return null;
            }
        };
        Path file = dir.resolve("c");
        try (ChunkFile f = ChunkFile.open(C, file, plain, true)) {
            f.write(0, new ByteBuffer[] {ByteBuffer.wrap(random(8 * BLOCK, 5))});
            f.force();
            ChunkChecksumTest.flipBit(file, 2L * BLOCK);
            bufferedBytes.set(0);
            assertEquals(List.of(new BlockRange(2L * BLOCK, BLOCK)), f.verify(0, 8, plain));
            assertEquals(8L * BLOCK, bufferedBytes.get());
            assertEquals(0, directBytes.get());
        }
    }
}
