package io.fastblock.storage.chunk;

import static io.fastblock.storage.TestBuffers.random;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.io.ReadCountingFiles;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
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

    private ReadCountingFiles files;

    @BeforeEach
    void counting() throws IOException {
        files = ReadCountingFiles.in(dir, true);
    }

    @Test
    void freshUnforcedWritesVerifyCleanThroughTheDeviceAndTheBufferedHandleIsNotRead() throws Exception {
        try (ChunkFile f = ChunkFile.open(C, dir.resolve("c"), files, true)) {
            f.write(0, new ByteBuffer[] {ByteBuffer.wrap(random(64 * BLOCK, 1))});
            // Rewritten in place and never forced: only the page cache has these bytes until the check.
            f.write(5L * BLOCK + 100, new ByteBuffer[] {ByteBuffer.wrap(random(3 * BLOCK, 2))});
            files.bufferedBytes.set(0);
            assertEquals(List.of(), f.verify(0, 64, files));
            assertEquals(List.of(), f.verify(3, 5, files), "a range that starts inside the file");
            assertEquals(0, files.bufferedBytes.get(), "the check reads nothing through the page cache");
            assertEquals((64 + 5) * (long) BLOCK, files.directBytes.get(), "every block checked came from the device");
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
            assertTrue(files.directBytes.get() > 0);
        }
    }

    @Test
    void withoutDirectReadsTheCheckGoesThroughThePageCache() throws Exception {
        ReadCountingFiles plain = ReadCountingFiles.in(dir, false);
        Path file = dir.resolve("c");
        try (ChunkFile f = ChunkFile.open(C, file, plain, true)) {
            f.write(0, new ByteBuffer[] {ByteBuffer.wrap(random(8 * BLOCK, 5))});
            f.force();
            ChunkChecksumTest.flipBit(file, 2L * BLOCK);
            plain.bufferedBytes.set(0);
            assertEquals(List.of(new BlockRange(2L * BLOCK, BLOCK)), f.verify(0, 8, plain));
            assertEquals(8L * BLOCK, plain.bufferedBytes.get());
            assertEquals(0, plain.directBytes.get());
        }
    }
}
