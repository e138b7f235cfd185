package io.fastblock.storage.chunk;

import static io.fastblock.storage.TestBuffers.random;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.io.FileIo;
import io.fastblock.storage.io.ForwardingFileIoFactory;
import io.fastblock.storage.io.ReadCountingFiles;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A chunk's reads for clients go through its handle without readahead, on real files: they see
 * writes not yet forced (one page cache), and after compaction puts a new data file in place they
 * read the new file, not the one renamed over.
 */
class ChunkReadHandleTest {
    private static final int BLOCK = ChunkFile.BLOCK;
    private static final ChunkId C = new ChunkId(7, 2);

    @TempDir
    Path dir;

    @Test
    void readsGoThroughTheHandleWithoutReadaheadAndSeeUnforcedWrites() throws Exception {
        ReadCountingFiles files = ReadCountingFiles.in(dir, true);
        byte[] first = random(64 * BLOCK, 1);
        byte[] over = random(4 * BLOCK, 2);
        try (ChunkFile f = ChunkFile.open(C, dir.resolve("c"), files, true)) {
            f.write(0, new ByteBuffer[] {ByteBuffer.wrap(first)});
            f.write(10L * BLOCK, new ByteBuffer[] {ByteBuffer.wrap(over)});
            System.arraycopy(over, 0, first, 10 * BLOCK, over.length);
            files.bufferedBytes.set(0);
            assertArrayEquals(Arrays.copyOfRange(first, 8 * BLOCK, 24 * BLOCK), read(f, 8L * BLOCK, 16 * BLOCK));
            assertArrayEquals(Arrays.copyOfRange(first, 100, 3000), read(f, 100, 2900), "a read inside a block");
            assertEquals(0, files.bufferedBytes.get(), "nothing read through the data handle");
            assertEquals(17L * BLOCK, files.noReadaheadBytes.get(), "16 blocks, then the one block of the short read");
        }
    }

    @Test
    void afterCompactionReadsComeFromTheNewFile() throws Exception {
        ReadCountingFiles files = ReadCountingFiles.in(dir, true);
        byte[] data = random(8 * BLOCK, 3);
        byte[] later = random(2 * BLOCK, 4);
        try (ChunkFile f = ChunkFile.open(C, dir.resolve("c"), files, true)) {
            f.write(0, new ByteBuffer[] {ByteBuffer.wrap(data)});
            assertArrayEquals(data, read(f, 0, 8 * BLOCK)); // the handle is open on the old file now
            FileIo temp = files.open(dir.resolve("c.compact"), true);
            temp.writeFully(ByteBuffer.wrap(data), 0); // a compacted copy holds the same bytes
            f.replaceData(temp, files);
            // Written into the file now in place: a handle left on the renamed-over file would not see it.
            f.write(3L * BLOCK, new ByteBuffer[] {ByteBuffer.wrap(later)});
            System.arraycopy(later, 0, data, 3 * BLOCK, later.length);
            assertArrayEquals(data, read(f, 0, 8 * BLOCK));
        }
    }

    @Test
    void withoutSuchAHandleReadsGoThroughTheDataHandle() throws Exception {
        ReadCountingFiles counting = ReadCountingFiles.in(dir, true);
        ForwardingFileIoFactory none = new ForwardingFileIoFactory(counting) {
            @Override
            public FileIo openNoReadahead(Path file) {
                return null;
            }
        };
        byte[] data = random(4 * BLOCK, 5);
        try (ChunkFile f = ChunkFile.open(C, dir.resolve("c"), none, true)) {
            f.write(0, new ByteBuffer[] {ByteBuffer.wrap(data)});
            assertArrayEquals(data, read(f, 0, 4 * BLOCK));
            assertEquals(4L * BLOCK, counting.bufferedBytes.get());
            assertEquals(0, counting.noReadaheadBytes.get());
        }
    }

    private static byte[] read(ChunkFile f, long offset, int length) throws Exception {
        ByteBuffer dst = ByteBuffer.allocateDirect(length);
        f.read(offset, length, dst);
        byte[] out = new byte[length];
        dst.flip().get(out);
        return out;
    }
}
