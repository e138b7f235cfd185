package io.fastblock.storage.chunk;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.Extents;
import io.fastblock.storage.io.FileIo;
import io.fastblock.storage.io.FileIoFactory;
import io.fastblock.storage.io.ForwardingFileIo;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The allocation map's in-memory copy: it always equals the file (after every change and after a
 * reopen), an overwrite of allocated blocks touches no file, the bits reach the file before the
 * data does, and a failed map write changes nothing in memory, so the next write retries it.
 */
class AllocationMapTest {
    private static final int B = ChunkFile.BLOCK;
    private static final ChunkId C = new ChunkId(1, 2);

    @TempDir
    Path dir;

    /** Real files, with every call recorded as "suffix op" (suffix: map, crc or data) and an optional failing write. */
    private static final class Recording implements FileIoFactory {
        final List<String> calls = new ArrayList<>();
        String failNextWriteOf;

        @Override
        public FileIo open(Path file, boolean create) throws IOException {
            FileIo real = FileIoFactory.real().open(file, create);
            String name = file.getFileName().toString();
            String kind = name.endsWith(".map") ? "map" : name.endsWith(".crc") ? "crc" : "data";
            return new ForwardingFileIo(real) {
                @Override
                public int read(ByteBuffer dst, long position) throws IOException {
                    calls.add(kind + " read");
                    return super.read(dst, position);
                }

                @Override
                public int write(ByteBuffer src, long position) throws IOException {
                    if (kind.equals(failNextWriteOf)) {
                        failNextWriteOf = null;
                        throw new IOException("injected write failure on " + kind);
                    }
                    calls.add(kind + " write");
                    return super.write(src, position);
                }

                @Override
                public void force(boolean metadata) throws IOException {
                    calls.add(kind + " force");
                    super.force(metadata);
                }

                @Override
                public long size() throws IOException {
                    calls.add(kind + " size");
                    return super.size();
                }

                @Override
                public void truncate(long size) throws IOException {
                    calls.add(kind + " truncate");
                    super.truncate(size);
                }
            };
        }

        @Override
        public void syncDirectory(Path d) {
        }

        List<String> of(String kind) {
            return calls.stream().filter(c -> c.startsWith(kind + " ")).toList();
        }
    }

    private static ByteBuffer[] block(long seed) {
        byte[] b = new byte[B];
        new Random(seed).nextBytes(b);
        return new ByteBuffer[] {ByteBuffer.wrap(b)};
    }

    /** The map as the file on disk says, decoded independently of AllocationMap. */
    private Extents fromDisk(Path data, long length) throws IOException {
        byte[] bits = Files.readAllBytes(ChunkFile.mapOf(data));
        Extents.Builder out = new Extents.Builder();
        for (long blk = 0; blk < length / B; blk++) {
            if (blk / 8 < bits.length && (bits[(int) (blk / 8)] & (1 << (int) (blk % 8))) != 0) {
                out.add(blk * B, B);
            }
        }
        return out.build();
    }

    /** Byte-clipped ranges of {@code [offset, offset + length)}, from the file's bits one block at a time. */
    private Extents fromDisk(Path data, long offset, long length) throws IOException {
        Extents.Builder out = new Extents.Builder();
        long end = offset + length;
        for (Extents.Range r : fromDisk(data, (end + B - 1) / B * B).ranges()) {
            long a = Math.max(offset, r.offset());
            long z = Math.min(end, r.end());
            if (z > a) {
                out.add(a, z - a);
            }
        }
        return out.build();
    }

    @Test
    void anyRangeAnswersAsTheBitsOneByOneSay() throws Exception {
        Path data = dir.resolve("c");
        Random r = new Random(11);
        long span = 700L * B;
        try (ChunkFile f = ChunkFile.open(C, data, FileIoFactory.real(), true)) {
            // Long runs (whole bytes of the map set or clear) and ragged edges, then ranges cut anywhere,
            // also past the end of the map.
            for (int step = 0; step < 120; step++) {
                long first = r.nextInt(680);
                int count = 1 + (r.nextInt(4) == 0 ? r.nextInt(120) : r.nextInt(9));
                f.allocate(first * B, (long) count * B, r.nextInt(3) > 0);
                for (int q = 0; q < 20; q++) {
                    long offset = r.nextInt((int) span + 3 * B);
                    long length = 1 + r.nextInt((int) span);
                    assertEquals(fromDisk(data, offset, length), f.extents(offset, length),
                            "step " + step + " range " + offset + "+" + length);
                }
            }
            assertEquals(fromDisk(data, 0, span), f.extents(0, span));
        }
    }

    @Test
    void anOverwriteOfAllocatedBlocksTouchesNoMapFileAndNewBitsLandBeforeTheData() throws Exception {
        Path data = dir.resolve("c");
        Recording files = new Recording();
        try (ChunkFile f = ChunkFile.open(C, data, files, true)) {
            files.calls.clear();
            f.write(5 * B, block(1));
            assertEquals(List.of("map write"), files.of("map"), "a new block: its bit is written once, nothing read");
            int mapWrite = files.calls.indexOf("map write");
            int dataWrite = files.calls.indexOf("data write");
            assertEquals(true, mapWrite >= 0 && mapWrite < dataWrite, "allocated before the data lands: " + files.calls);

            files.calls.clear();
            for (int i = 0; i < 10; i++) {
                f.write(5 * B, block(2 + i));
            }
            assertEquals(List.of(), files.of("map"), "overwrites of an allocated block: no map call at all");
            assertEquals(new Extents.Builder().add(5 * B, B).build(), f.extents(0, 64L * B));
            assertEquals(List.of(), files.of("map"), "extents are answered from memory");
        }
    }

    @Test
    void theMemoryCopyEqualsTheFileAfterEveryChangeAndAfterAReopen() throws Exception {
        Path data = dir.resolve("c");
        Random r = new Random(7);
        long span = 300L * B;
        try (ChunkFile f = ChunkFile.open(C, data, FileIoFactory.real(), true)) {
            for (int step = 0; step < 300; step++) {
                long first = r.nextInt(280);
                int count = 1 + r.nextInt(20);
                switch (r.nextInt(3)) {
                    case 0 -> f.write(first * B, new ByteBuffer[] {ByteBuffer.allocate(count * B)});
                    case 1 -> f.allocate(first * B, (long) count * B, r.nextBoolean());
                    default -> f.trim(first * B, (long) count * B);
                }
                assertEquals(fromDisk(data, span), f.extents(0, span), "after step " + step);
            }
            Extents before = f.extents(0, span);
            try (ChunkFile again = ChunkFile.open(C, dir.resolve("c"), FileIoFactory.real(), false)) {
                assertEquals(before, again.extents(0, span), "a second open reads the same map from the file");
            }
        }
    }

    @Test
    void aFailedMapWriteChangesNothingAndTheNextWriteRetriesIt() throws Exception {
        Path data = dir.resolve("c");
        Recording files = new Recording();
        try (ChunkFile f = ChunkFile.open(C, data, files, true)) {
            files.failNextWriteOf = "map";
            assertThrows(IOException.class, () -> f.write(3 * B, block(3)));
            assertEquals(Extents.NONE, f.extents(0, 64L * B), "the bit is not set in memory");
            assertEquals(Extents.NONE, fromDisk(data, 64L * B));

            f.write(3 * B, block(4));
            assertEquals(new Extents.Builder().add(3 * B, B).build(), f.extents(0, 64L * B));
            assertEquals(new Extents.Builder().add(3 * B, B).build(), fromDisk(data, 64L * B), "written through this time");
        }
    }

    @Test
    void aCutMapReadsTheSameAfterReopenAndGrowsAgain() throws Exception {
        Path data = dir.resolve("c");
        try (ChunkFile f = ChunkFile.open(C, data, FileIoFactory.real(), true)) {
            f.write(0, new ByteBuffer[] {ByteBuffer.allocate(40 * B)});
            f.trim(13 * B, 27 * B); // to the end of the data: the file and the map are cut
            assertEquals(2, Files.size(ChunkFile.mapOf(data)), "13 blocks need 2 bytes");
            f.write(100 * B, block(9));
            assertArrayEquals(Files.readAllBytes(ChunkFile.mapOf(data)), bitsOf(f.extents(0, 128L * B), 13));
        }
        try (ChunkFile f = ChunkFile.open(C, data, FileIoFactory.real(), false)) {
            assertEquals(new Extents.Builder().add(0, 13 * B).add(100 * B, B).build(), f.extents(0, 1L << 30));
        }
    }

    private static byte[] bitsOf(Extents e, int bytes) {
        byte[] out = new byte[bytes];
        for (Extents.Range range : e.ranges()) {
            for (long blk = range.offset() / B; blk < range.end() / B; blk++) {
                out[(int) (blk / 8)] |= (byte) (1 << (int) (blk % 8));
            }
        }
        return out;
    }
}
