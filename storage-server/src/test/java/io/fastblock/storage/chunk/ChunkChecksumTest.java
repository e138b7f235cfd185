package io.fastblock.storage.chunk;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.TestBuffers;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

public class ChunkChecksumTest {
    private static final int BLOCK = ChunkFile.BLOCK;
    @TempDir
    Path dir;

    static byte[] read(ChunkStore store, ChunkId c, long off, int len) throws Exception {
        return TestBuffers.drain(store.read(c, off, len, PooledByteBufAllocator.DEFAULT), len);
    }

    static void write(ChunkStore store, ChunkId c, long off, byte[] data) throws Exception {
        store.writeAsync(1, 1, c, off, Unpooled.wrappedBuffer(data)).get(10, TimeUnit.SECONDS);
    }

    private static boolean sumsHeld(ChunkStore store, ChunkId c) throws Exception {
        return store.onStripeNow(c, () -> store.openChunk(c).sumsHeld());
    }

    public static void flipBit(Path file, long position) throws Exception {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.seek(position);
            int b = f.read();
            f.seek(position);
            f.write(b ^ 0x10);
        }
    }

    @Test
    void sidecarHoldsOneCrcPerBlockAndPartialWritesKeepItTrue() throws Exception {
        ChunkId c = new ChunkId(1, 2);
        Random r = new Random(3);
        byte[] ref = new byte[10 * BLOCK];
        try (ChunkStore store = new ChunkStore(dir, 2)) {
            for (int i = 0; i < 200; i++) {
                int len = 1 + r.nextInt(3 * BLOCK);
                int off = r.nextInt(ref.length - len);
                byte[] d = new byte[len];
                r.nextBytes(d);
                System.arraycopy(d, 0, ref, off, len);
                write(store, c, off, d);
            }
            assertArrayEquals(ref, read(store, c, 0, ref.length));
            store.flush(); // the sidecar file is written at a checkpoint
            Path crc = dir.resolve("chunks/1/2.crc");
            assertTrue(Files.exists(crc));
            assertTrue(Files.size(crc) <= 10 * 4 && Files.size(crc) >= 9 * 4, "4 bytes per block: " + Files.size(crc));
            assertEquals(List.of(), store.verifyAsync(c, 0, 10).get(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void aChunkThatTurnsCleanGivesItsChecksumMemoryBackAndStillVerifies() throws Exception {
        ChunkId c = new ChunkId(1, 9);
        try (ChunkStore store = new ChunkStore(dir, 2)) {
            byte[] d = new byte[4 * BLOCK];
            new Random(11).nextBytes(d);
            write(store, c, 0, d);
            assertTrue(sumsHeld(store, c), "held while written");
            assertEquals(0, Files.size(dir.resolve("chunks/1/9.crc")), "not written per write");
            store.flush();
            assertTrue(sumsHeld(store, c), "written in the interval: still held");
            store.flush();
            assertEquals(0, store.dirtyCount());
            assertFalse(sumsHeld(store, c), "clean: memory given back");
            assertEquals(4 * 4, Files.size(dir.resolve("chunks/1/9.crc")));
            assertArrayEquals(d, read(store, c, 0, d.length));
            flipBit(store.fileOf(c), 3 * BLOCK + 5);
            assertEquals(List.of(new BlockRange(3L * BLOCK, BLOCK)), store.verifyAsync(c, 0, 4).get(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void aChunkOnlyReadHoldsItsChecksumsUntilACheckpointIntervalWithoutReadsAndStillChecks() throws Exception {
        ChunkId c = new ChunkId(1, 10);
        try (ChunkStore store = new ChunkStore(dir, 2)) {
            byte[] d = new byte[4 * BLOCK];
            new Random(12).nextBytes(d);
            write(store, c, 0, d);
            store.flush();
            store.flush();
            assertFalse(sumsHeld(store, c), "clean: not held");
            assertArrayEquals(java.util.Arrays.copyOfRange(d, BLOCK, 2 * BLOCK), read(store, c, BLOCK, BLOCK));
            assertTrue(sumsHeld(store, c), "held after a read");
            store.flush();
            assertTrue(sumsHeld(store, c), "read in the interval: still held");
            store.flush();
            assertFalse(sumsHeld(store, c), "an interval without reads: let go");

            assertArrayEquals(d, read(store, c, 0, d.length));
            assertTrue(sumsHeld(store, c));
            flipBit(store.fileOf(c), 2 * BLOCK + 9);
            try {
                read(store, c, 2 * BLOCK, BLOCK);
                fail("corrupt block read without error while its checksum is held");
            } catch (CorruptBlockException e) {
                assertEquals(2L * BLOCK, e.offset());
            }
        }
    }

    @Test
    void flippedBitFailsTheReadNamingTheBlockAndOnlyReadsTouchingIt() throws Exception {
        ChunkId c = new ChunkId(1, 3);
        byte[] d = new byte[8 * BLOCK];
        new Random(4).nextBytes(d);
        try (ChunkStore store = new ChunkStore(dir, 2)) {
            write(store, c, 0, d);
            flipBit(store.fileOf(c), 5 * BLOCK + 17);
            try {
                read(store, c, 4 * BLOCK + 100, 2 * BLOCK);
                fail("corrupt block read without error");
            } catch (CorruptBlockException e) {
                assertEquals(5L * BLOCK, e.offset());
                assertEquals(BLOCK, e.length());
                assertEquals(c, e.chunk());
                assertTrue(e.getMessage().contains("blocks 5..5"), e.getMessage());
            }
            assertArrayEquals(java.util.Arrays.copyOfRange(d, 0, 5 * BLOCK), read(store, c, 0, 5 * BLOCK), "good blocks still read");
            assertEquals(List.of(new BlockRange(5L * BLOCK, BLOCK)), store.verifyAsync(c, 0, 8).get(10, TimeUnit.SECONDS));
            CompletionException async = null;
            try {
                store.readAsync(c, 5 * BLOCK, 1, PooledByteBufAllocator.DEFAULT).join();
            } catch (CompletionException e) {
                async = e;
            }
            assertTrue(async != null && async.getCause().getCause() instanceof CorruptBlockException, String.valueOf(async));
            // Whole-block reads go straight into the answer buffer: still checked, still named.
            CompletionException aligned = null;
            try {
                store.readAsync(c, 4 * BLOCK, 2 * BLOCK, PooledByteBufAllocator.DEFAULT).join();
            } catch (CompletionException e) {
                aligned = e;
            }
            assertTrue(aligned != null && aligned.getCause().getCause() instanceof CorruptBlockException bad
                    && bad.offset() == 5L * BLOCK, String.valueOf(aligned));
            assertArrayEquals(java.util.Arrays.copyOfRange(d, 6 * BLOCK + 5, 8 * BLOCK - 3),
                    read(store, c, 6 * BLOCK + 5, 2 * BLOCK - 8), "unaligned good range");
        }
    }

    @Test
    void partialWriteIntoABadBlockLeavesItBadAndRepairFixesIt() throws Exception {
        ChunkId c = new ChunkId(1, 4);
        byte[] d = new byte[4 * BLOCK];
        new Random(5).nextBytes(d);
        try (ChunkStore store = new ChunkStore(dir, 2)) {
            write(store, c, 0, d);
            flipBit(store.fileOf(c), 2 * BLOCK + 9);
            byte[] small = {1, 2, 3};
            write(store, c, 2 * BLOCK + 100, small);
            System.arraycopy(small, 0, d, 2 * BLOCK + 100, 3);
            assertEquals(List.of(new BlockRange(2L * BLOCK, BLOCK)), store.verifyAsync(c, 0, 4).get(10, TimeUnit.SECONDS),
                    "a partial write must not bless the rotten rest of the block");
            ChunkStore.WriteWatch w = store.watch(c);
            ByteBuf good = Unpooled.wrappedBuffer(d, BLOCK, 3 * BLOCK);
            long repaired = store.repairAsync(w, BLOCK, good).get(10, TimeUnit.SECONDS);
            assertEquals(BLOCK, repaired, "only the bad block is rewritten");
            assertArrayEquals(d, read(store, c, 0, d.length));
        }
    }

    @Test
    void repairSkipsBlocksWrittenSinceTheFetch() throws Exception {
        ChunkId c = new ChunkId(1, 5);
        byte[] d = new byte[2 * BLOCK];
        new Random(6).nextBytes(d);
        try (ChunkStore store = new ChunkStore(dir, 2)) {
            write(store, c, 0, d);
            flipBit(store.fileOf(c), 10);
            ChunkStore.WriteWatch w = store.watch(c);
            byte[] stale = d.clone();
            // A newer partial write lands after the good copy was fetched: the block stays bad rather than lose it.
            write(store, c, 100, new byte[]{7});
            assertEquals(0L, store.repairAsync(w, 0, Unpooled.wrappedBuffer(stale, 0, BLOCK)).get(10, TimeUnit.SECONDS));
            assertEquals(1, store.verifyAsync(c, 0, 2).get(10, TimeUnit.SECONDS).size());
        }
    }

    @Test
    void chunkFileWithoutSidecarGetsOneInsteadOfReadingAsCorrupt() throws Exception {
        ChunkId c = new ChunkId(1, 7);
        byte[] d = new byte[3 * BLOCK + 10];
        new Random(8).nextBytes(d);
        try (ChunkStore store = new ChunkStore(dir, 2)) {
            write(store, c, 0, d);
        }
        Files.delete(dir.resolve("chunks/1/7.crc"));
        try (ChunkStore store = new ChunkStore(dir, 2)) {
            assertArrayEquals(d, read(store, c, 0, d.length));
            assertTrue(Files.size(dir.resolve("chunks/1/7.crc")) == 4 * 4);
            flipBit(store.fileOf(c), 2 * BLOCK + 1);
            assertEquals(List.of(new BlockRange(2L * BLOCK, BLOCK)), store.verifyAsync(c, 0, 4).get(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void holesAndNeverWrittenBlocksVerify() throws Exception {
        ChunkId c = new ChunkId(1, 6);
        try (ChunkStore store = new ChunkStore(dir, 2)) {
            write(store, c, 100 * BLOCK + 5, new byte[]{1});
            assertEquals(List.of(), store.verifyAsync(c, 0, 101).get(10, TimeUnit.SECONDS));
            assertArrayEquals(new byte[BLOCK], read(store, c, 50 * BLOCK, BLOCK));
            flipBit(store.fileOf(c), 7 * BLOCK);
            assertEquals(List.of(new BlockRange(7L * BLOCK, BLOCK)), store.verifyAsync(c, 0, 101).get(10, TimeUnit.SECONDS),
                    "a flipped bit in a hole is caught too");
        }
    }
}
