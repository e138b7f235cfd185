package io.fastblock.storage.chunk;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.Extents;
import io.netty.buffer.Unpooled;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The per-block allocation map of chunk files and trims of them, on real files. */
class ChunkAllocationTest {
    private static final int K = 1024;
    private static final ChunkId C = new ChunkId(3, 1);

    @TempDir
    Path dir;

    private static byte[] bytes(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static void write(ChunkStore s, long off, byte[] data) throws Exception {
        s.writeAsync(C, off, Unpooled.wrappedBuffer(data)).get(10, TimeUnit.SECONDS);
    }

    private static void trim(ChunkStore s, long off, long len) throws Exception {
        s.trimAsync(ChunkStore.UNKNOWN_GROUP, 0, C, off, len, false).get(10, TimeUnit.SECONDS);
    }

    @Test
    void writtenZerosAreAllocatedHolesAreNot() throws Exception {
        try (ChunkStore s = new ChunkStore(dir, 2)) {
            write(s, 0, new byte[4 * K]);
            write(s, 40 * K + 5, new byte[] {1}); // one byte: its whole block
            write(s, 64 * K - 10, new byte[20]); // straddles two blocks
            assertEquals(new Extents.Builder().add(0, 4 * K).add(40 * K, 4 * K).add(60 * K, 8 * K).build(),
                    s.extents(C, 0, 1 << 20));
            assertEquals(new Extents.Builder().add(100, 3996).build(), s.extents(C, 100, 8 * K), "clipped");
            assertEquals(Extents.NONE, s.extents(new ChunkId(3, 2), 0, 1 << 20), "no file, nothing allocated");
            assertEquals(Extents.NONE, s.extents(C, 1 << 20, 4 * K), "past the map's end");
        }
    }

    @Test
    void interiorTrimsZeroAndUnallocateTailTrimsCutTheFile() throws Exception {
        byte[] data = bytes(64 * K, 1);
        try (ChunkStore s = new ChunkStore(dir, 2)) {
            write(s, 0, data);
            trim(s, 8 * K, 8 * K);
            byte[] want = data.clone();
            java.util.Arrays.fill(want, 8 * K, 16 * K, (byte) 0);
            assertArrayEquals(want, ChunkReads.read(s, C, 0, 64 * K), "trimmed blocks read as zeros and pass their checks");
            assertEquals(new Extents.Builder().add(0, 8 * K).add(16 * K, 48 * K).build(), s.extents(C, 0, 64 * K));
            assertEquals(List.of(), s.verifyAsync(C, 0, 16).get(10, TimeUnit.SECONDS));

            trim(s, 36 * K, 1 << 20);
            assertEquals(36 * K, s.sizeOf(C), "a trim to the end cuts the file");
            assertEquals(new Extents.Builder().add(0, 8 * K).add(16 * K, 20 * K).build(), s.extents(C, 0, 1 << 20));
            assertArrayEquals(new byte[28 * K], ChunkReads.read(s, C, 36 * K, 28 * K));
            write(s, 60 * K, new byte[] {9});
            assertEquals(new Extents.Builder().add(0, 8 * K).add(16 * K, 20 * K).add(60 * K, 4 * K).build(),
                    s.extents(C, 0, 1 << 20), "a write past the cut allocates only its block");
        }
        try (ChunkStore s = new ChunkStore(dir, 2)) {
            assertEquals(new Extents.Builder().add(0, 8 * K).add(16 * K, 20 * K).add(60 * K, 4 * K).build(),
                    s.extents(C, 0, 1 << 20), "the map outlives a restart");
        }
    }

    @Test
    void aLargeInteriorTrimGivesItsDiskBlocksBack() throws Exception {
        byte[] data = bytes(8 << 20, 6);
        try (ChunkStore s = new ChunkStore(dir, 2)) {
            write(s, 0, data);
            s.flush();
            long before = io.fastblock.storage.io.DiskUsage.allocatedBytes(s.fileOf(C));
            trim(s, 1 << 20, 4 << 20);
            s.flush();
            long after = io.fastblock.storage.io.DiskUsage.allocatedBytes(s.fileOf(C));
            assertTrue(before - after >= (4 << 20) - 65536, "4 MiB went back: " + before + " -> " + after);
            java.util.Arrays.fill(data, 1 << 20, 5 << 20, (byte) 0);
            assertArrayEquals(data, ChunkReads.read(s, C, 0, data.length));
            assertEquals(new Extents.Builder().add(0, 1 << 20).add(5 << 20, 3 << 20).build(), s.extents(C, 0, 16 << 20));
        }
    }

    @Test
    void aWholeTrimDeletesEveryFileOfTheChunk() throws Exception {
        try (ChunkStore s = new ChunkStore(dir, 2)) {
            write(s, 0, bytes(16 * K, 2));
            Path file = s.fileOf(C);
            assertTrue(Files.exists(ChunkFile.mapOf(file)));
            s.trimAsync(7, 5, C, 0, 1L << 30, true).get(10, TimeUnit.SECONDS);
            assertFalse(Files.exists(file));
            assertFalse(Files.exists(ChunkFile.sidecarOf(file)));
            assertFalse(Files.exists(ChunkFile.mapOf(file)));
            assertFalse(s.chunks().contains(C));
            assertArrayEquals(new byte[16 * K], ChunkReads.read(s, C, 0, 16 * K));
            assertEquals(Extents.NONE, s.extents(C, 0, 1 << 20));
            write(s, 4 * K, new byte[] {1});
            assertEquals(new Extents.Builder().add(4 * K, 4 * K).build(), s.extents(C, 0, 1 << 20));
        }
    }

    @Test
    void aRepairRestoresBytesWithoutAllocatingTheBlock() throws Exception {
        try (ChunkStore s = new ChunkStore(dir, 2)) {
            write(s, 0, bytes(16 * K, 4));
            trim(s, 4 * K, 4 * K);
            Extents before = s.extents(C, 0, 16 * K);
            // Bit rot inside the trimmed (zero, unallocated) block.
            try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(s.fileOf(C),
                    java.nio.file.StandardOpenOption.WRITE)) {
                ch.write(java.nio.ByteBuffer.wrap(new byte[] {1}), 5000);
            }
            assertEquals(List.of(new BlockRange(4 * K, 4 * K)), s.verifyAsync(C, 0, 4).get(10, TimeUnit.SECONDS));
            ChunkStore.WriteWatch w = s.watch(C);
            assertEquals(4 * K, s.repairAsync(w, 4 * K, Unpooled.wrappedBuffer(new byte[4 * K])).get(10, TimeUnit.SECONDS));
            assertEquals(List.of(), s.verifyAsync(C, 0, 4).get(10, TimeUnit.SECONDS));
            assertEquals(before, s.extents(C, 0, 16 * K), "the repaired block is still not allocated");
        }
    }

    @Test
    void aChunkFileFromBeforeMapsCountsEveryBlockItSpansAsAllocated() throws Exception {
        try (ChunkStore s = new ChunkStore(dir, 2)) {
            write(s, 0, bytes(10 * K, 3));
        }
        Files.delete(ChunkFile.mapOf(dir.resolve("chunks/3/1")));
        try (ChunkStore s = new ChunkStore(dir, 2)) {
            assertEquals(new Extents.Builder().add(0, 12 * K).build(), s.extents(C, 0, 1 << 20));
        }
    }
}
