package io.fastblock.storage.chunk;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.Extents;
import io.fastblock.storage.io.ByteRateLimiter;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Compaction of chunk files after small trims ({@link ChunkSparsifier}), on real files and real disk blocks. */
class ChunkSparsifierTest {
    private static final int K = 1024;
    private static final int MIB = 1 << 20;
    private static final ChunkId C = new ChunkId(7, 2);

    @TempDir
    Path dir;

    private static byte[] bytes(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static byte[] read(ChunkStore s, long off, int len) throws Exception {
        return ChunkReads.read(s, C, off, len);
    }

    private static void write(ChunkStore s, long off, byte[] data) throws Exception {
        s.writeAsync(C, off, Unpooled.wrappedBuffer(data)).get(30, TimeUnit.SECONDS);
    }

    private static void trim(ChunkStore s, long off, long len) throws Exception {
        s.trimAsync(ChunkStore.UNKNOWN_GROUP, 0, C, off, len, false).get(30, TimeUnit.SECONDS);
    }

    /** Bytes of disk the file occupies, from stat's block count (Java has no portable way to ask). */
    private static long diskBytes(Path file) throws Exception {
        Process p = new ProcessBuilder("stat", "-c", "%b %B", file.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0, "stat: " + out);
        String[] f = out.split("\\s+");
        return Long.parseLong(f[0]) * Long.parseLong(f[1]);
    }

    /** 8 MiB written, every other 4 KiB block trimmed: the model of what the chunk must read. */
    private static byte[] writeAndTrimHalf(ChunkStore s) throws Exception {
        return writeAndTrimHalf(s, false);
    }

    /** Unless {@code background}, the store's own compaction is held off so the test decides when. */
    private static byte[] writeAndTrimHalf(ChunkStore s, boolean background) throws Exception {
        if (!background) {
            s.sparsifier().quietFor(Long.MAX_VALUE);
        }
        byte[] data = bytes(8 * MIB, 11);
        write(s, 0, data);
        byte[] want = data.clone();
        for (int b = 1; b < 8 * MIB / (4 * K); b += 2) {
            trim(s, (long) b * 4 * K, 4 * K);
            java.util.Arrays.fill(want, b * 4 * K, (b + 1) * 4 * K, (byte) 0);
        }
        return want;
    }

    @Test
    void compactionGivesBackZeroWrittenTrimsAndKeepsDataAllocationAndChecksums() throws Exception {
        try (ChunkStore s = new ChunkStore(dir, 2)) {
            byte[] want = writeAndTrimHalf(s);
            s.force(C);
            Path file = s.fileOf(C);
            long before = diskBytes(file);
            Extents allocated = s.extents(C, 0, 8 * MIB);
            // The last trimmed block is the file's last: that trim cut the file, the other 1023 were zero-written.
            assertEquals(4L * MIB - 4 * K, s.trimmedButAllocated(C), "1023 interior trims of 4 KiB counted");
            assertTrue(before >= 8L * MIB - 64 * K, "zero-written trims keep their blocks before compaction: " + before);

            assertTrue(s.compactNow(C));
            long after = diskBytes(file);
            System.out.printf("chunk file on disk: %d KiB before compaction, %d KiB after%n", before >> 10, after >> 10);
            assertTrue(after <= before * 0.55 && after >= 4L * MIB, "disk use " + before + " -> " + after);
            assertEquals(0, s.trimmedButAllocated(C));
            assertEquals(8L * MIB - 4 * K, s.sizeOf(C), "length kept");
            assertArrayEquals(want, read(s, 0, 8 * MIB));
            assertEquals(allocated, s.extents(C, 0, 8 * MIB), "allocation unchanged");
            assertEquals(List.of(), s.verifyAsync(C, 0, 2048).get(30, TimeUnit.SECONDS), "checksums verify");
            assertFalse(Files.exists(ChunkFile.sparseTempOf(file)));

            // The swapped-in file takes writes and trims like the old one.
            byte[] more = bytes(8 * K, 12);
            write(s, 12 * K, more);
            System.arraycopy(more, 0, want, 12 * K, 8 * K);
            assertArrayEquals(want, read(s, 0, 8 * MIB));
        }
        try (ChunkStore s = new ChunkStore(dir, 2)) {
            assertEquals(List.of(), s.verifyAsync(C, 0, 2048).get(30, TimeUnit.SECONDS), "checksums verify after reopen");
        }
    }

    @Test
    void writesAndTrimsDuringCompactionAreNotLost() throws Exception {
        try (ChunkStore s = new ChunkStore(dir, 2)) {
            byte[] want = writeAndTrimHalf(s);
            // Slow enough (8 pieces at 2 MiB/s) that the writes below land between the pieces.
            s.compactionPacedBy(new ByteRateLimiter(2L * MIB));
            CompletableFuture<Boolean> compaction = CompletableFuture.supplyAsync(() -> {
                try {
                    return s.compactNow(C);
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            Random r = new Random(5);
            int ops = 0;
            while (!compaction.isDone() || ops < 20) {
                int block = r.nextInt(2048);
                if (r.nextInt(4) == 0) {
                    trim(s, (long) block * 4 * K, 4 * K);
                    java.util.Arrays.fill(want, block * 4 * K, (block + 1) * 4 * K, (byte) 0);
                } else {
                    int off = block * 4 * K + r.nextInt(4 * K - 100);
                    byte[] d = bytes(100, ops);
                    write(s, off, d);
                    System.arraycopy(d, 0, want, off, 100);
                }
                ops++;
                Thread.sleep(5);
            }
            assertTrue(compaction.get(60, TimeUnit.SECONDS), "compaction completed");
            System.out.println("writes and trims during compaction: " + ops);
            assertArrayEquals(want, read(s, 0, 8 * MIB));
            assertEquals(List.of(), s.verifyAsync(C, 0, 2048).get(30, TimeUnit.SECONDS));
        }
    }

    @Test
    void aCopyLeftByACrashBeforeTheRenameIsRemovedAndTheChunkReadsAsBefore() throws Exception {
        byte[] want;
        Path file;
        try (ChunkStore s = new ChunkStore(dir, 2)) {
            want = writeAndTrimHalf(s);
            file = s.fileOf(C);
        }
        // What kill -9 between writing the copy and renaming it leaves: a partial copy next to the chunk.
        Path temp = ChunkFile.sparseTempOf(file);
        Files.write(temp, bytes(3 * MIB, 99));
        try (ChunkStore s = new ChunkStore(dir, 2)) {
            assertFalse(Files.exists(temp), "leftover copy removed at open");
            assertEquals(List.of(new ChunkId(7, 2)), s.chunks());
            assertArrayEquals(want, read(s, 0, 8 * MIB));
            assertEquals(List.of(), s.verifyAsync(C, 0, 2048).get(30, TimeUnit.SECONDS));
        }
    }

    @Test
    void aChunkDeletedDuringCompactionStaysDeleted() throws Exception {
        try (ChunkStore s = new ChunkStore(dir, 2)) {
            writeAndTrimHalf(s);
            s.compactionPacedBy(new ByteRateLimiter(2L * MIB));
            CompletableFuture<Boolean> compaction = CompletableFuture.supplyAsync(() -> {
                try {
                    return s.compactNow(C);
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            Thread.sleep(300);
            s.trimAsync(ChunkStore.UNKNOWN_GROUP, 0, C, 0, 8 * MIB, true).get(30, TimeUnit.SECONDS);
            assertFalse(compaction.get(60, TimeUnit.SECONDS), "compaction gave up");
            assertFalse(Files.exists(s.fileOf(C)));
            assertFalse(Files.exists(ChunkFile.sparseTempOf(s.fileOf(C))));
            assertEquals(List.of(), s.chunks());
        }
    }

    @Test
    void theBackgroundTaskCompactsAChunkOnceItsTrimsStop() throws Exception {
        try (ChunkStore s = new ChunkStore(dir, 2)) {
            writeAndTrimHalf(s, true);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            // The count drops when a compaction starts; the file is swapped when it ends.
            while ((s.trimmedButAllocated(C) > 0 || s.sparsifier().compactions() == 0) && System.nanoTime() < deadline) {
                Thread.sleep(200);
            }
            assertEquals(0, s.trimmedButAllocated(C), "compacted in the background");
            s.force(C);
            assertTrue(diskBytes(s.fileOf(C)) <= 4L * MIB + 256 * K, "disk use " + diskBytes(s.fileOf(C)));
        }
    }
}
