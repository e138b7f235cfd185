package io.fastblock.storage.chunk;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.io.FileIo;
import io.fastblock.storage.io.FileIoFactory;
import io.fastblock.storage.io.ForwardingFileIo;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A chunk's data file is written in pieces of at most {@link ChunkFile#WRITE_PIECE} bytes that do
 * not cross a piece boundary of the file (so later small overwrites land in small page-cache
 * folios), whatever buffers the data came in, and the bytes read back exactly. Real files.
 */
class ChunkFileWritePiecesTest {
    private static final ChunkId C = new ChunkId(5, 0);
    private static final int P = ChunkFile.WRITE_PIECE;

    @TempDir
    Path dir;

    /** Real files; each gathered or single write to the data file is recorded as {position, length}. */
    private static final class Pieces implements FileIoFactory {
        final List<long[]> writes = new ArrayList<>();

        @Override
        public FileIo open(Path file, boolean create) throws IOException {
            FileIo real = FileIoFactory.real().open(file, create);
            boolean data = !file.getFileName().toString().contains(".");
            return new ForwardingFileIo(real) {
                @Override
                public int write(ByteBuffer src, long position) throws IOException {
                    if (data) {
                        writes.add(new long[] {position, src.remaining()});
                    }
                    return super.write(src, position);
                }

                @Override
                public void writeFully(ByteBuffer[] srcs, long position) throws IOException {
                    long n = 0;
                    for (ByteBuffer b : srcs) {
                        n += b.remaining();
                    }
                    if (data) {
                        writes.add(new long[] {position, n});
                    }
                    to.writeFully(srcs, position);
                }
            };
        }

        @Override
        public void syncDirectory(Path d) throws IOException {
            FileIoFactory.real().syncDirectory(d);
        }
    }

    private static ByteBuffer[] split(byte[] bytes, int... sizes) {
        List<ByteBuffer> out = new ArrayList<>();
        int at = 0;
        for (int s : sizes) {
            out.add(ByteBuffer.allocateDirect(s).put(bytes, at, s).flip());
            at += s;
        }
        if (at < bytes.length) {
            out.add(ByteBuffer.wrap(bytes, at, bytes.length - at).slice());
        }
        return out.toArray(new ByteBuffer[0]);
    }

    private static void assertPieces(List<long[]> writes, long offset, long length) {
        long at = offset;
        for (long[] w : writes) {
            assertEquals(at, w[0], "pieces follow each other");
            assertTrue(w[1] > 0 && w[1] <= P, "piece of " + w[1] + " bytes");
            assertEquals(w[0] / P, (w[0] + w[1] - 1) / P, "piece at " + w[0] + "+" + w[1] + " crosses a boundary");
            at += w[1];
        }
        assertEquals(offset + length, at, "every byte written once");
    }

    private static byte[] read(ChunkFile f, long offset, int length) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(length);
        f.read(offset, length, b);
        return b.array();
    }

    @Test
    void largeWritesGoInAlignedPiecesAndReadBack() throws Exception {
        Random r = new Random(3);
        Pieces files = new Pieces();
        try (ChunkFile f = ChunkFile.open(C, dir.resolve("c"), files, true)) {
            // {offset, length, buffer sizes...}: one 1 MiB buffer; whole blocks from odd socket-sized
            // buffers at an offset that is not piece-aligned; a partial first and last block.
            long[][] cases = {{0, 1 << 20}, {3 * P + 12288, (1 << 20) + 8192, 1000, 70_000, 3}, {1000, 200_000, 65_536}};
            for (long[] c : cases) {
                byte[] bytes = new byte[(int) c[1]];
                r.nextBytes(bytes);
                int[] sizes = new int[c.length - 2];
                for (int i = 2; i < c.length; i++) {
                    sizes[i - 2] = (int) c[i];
                }
                files.writes.clear();
                f.write(c[0], split(bytes, sizes));
                assertPieces(files.writes, c[0], c[1]);
                assertArrayEquals(bytes, read(f, c[0], bytes.length), "read back at " + c[0]);
            }
            files.writes.clear();
            f.write(5 * P + 4096, new ByteBuffer[] {ByteBuffer.allocate(4096)});
            assertEquals(1, files.writes.size(), "a small write stays one write");
        }
    }
}
