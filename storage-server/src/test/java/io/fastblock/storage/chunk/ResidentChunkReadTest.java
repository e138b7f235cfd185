package io.fastblock.storage.chunk;

import static io.fastblock.storage.TestBuffers.random;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.Extents;
import io.fastblock.storage.TestBuffers;
import io.fastblock.storage.io.Mappings;
import io.fastblock.storage.io.PageCache;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Large client reads of cached chunk pages are answered with a checked view of the page cache, on
 * real files: the bytes are the chunk's, a bad block is still found, small reads and the node's own
 * reads get copies, and after compaction the view is of the new file.
 */
class ResidentChunkReadTest {
    private static final int BLOCK = ChunkFile.BLOCK;
    private static final int MIN = ChunkStore.RESIDENT_READ_MIN;
    private static final ChunkId C = new ChunkId(3, 1);

    @TempDir
    Path dir;

    private static void trim(ChunkStore store, long offset, long length) throws Exception {
        store.trimAsync(ChunkStore.UNKNOWN_GROUP, 0, C, offset, length, false).get(10, TimeUnit.SECONDS);
    }

    private static ByteBuf clientRead(ChunkStore store, long offset, int length) throws Exception {
        return store.readAsync(C, offset, length, PooledByteBufAllocator.DEFAULT).get(10, TimeUnit.SECONDS);
    }

    @Test
    void aLargeReadOfCachedPagesIsAReadOnlyViewWithTheChunksBytes() throws Exception {
        byte[] data = random(1 << 20, 1);
        try (ChunkStore store = new ChunkStore(dir, 2)) {
            ChunkChecksumTest.write(store, C, 0, data);
            ByteBuf view = clientRead(store, 64L * BLOCK, 128 * BLOCK);
            assertEquals(1, store.residentReads.sum());
            assertTrue(view.isReadOnly());
            assertArrayEquals(Arrays.copyOfRange(data, 64 * BLOCK, 192 * BLOCK), TestBuffers.drain(view, 128 * BLOCK));

            ByteBuf small = clientRead(store, 0, MIN - BLOCK);
            assertFalse(small.isReadOnly(), "below the size: a copy");
            assertArrayEquals(Arrays.copyOfRange(data, 0, MIN - BLOCK), TestBuffers.drain(small, MIN - BLOCK));
            ByteBuf own = store.read(C, 0, 1 << 20, PooledByteBufAllocator.DEFAULT);
            assertFalse(own.isReadOnly(), "the node's own readers get a copy");
            assertArrayEquals(data, TestBuffers.drain(own, 1 << 20));
            assertEquals(1, store.residentReads.sum(), "neither took a view");
        }
    }

    @Test
    void aBadBlockInACachedRangeFailsTheReadAsBefore() throws Exception {
        byte[] data = random(64 * BLOCK, 2);
        try (ChunkStore store = new ChunkStore(dir, 2)) {
            ChunkChecksumTest.write(store, C, 0, data);
            clientRead(store, 0, 64 * BLOCK).release();
            assertEquals(1, store.residentReads.sum(), "the range is cached, so a view answers it");
            ChunkChecksumTest.flipBit(dir.resolve("chunks/3/1"), 37L * BLOCK + 5); // through the page cache
            ExecutionException e = assertThrows(ExecutionException.class, () -> clientRead(store, 0, 64 * BLOCK));
            // Thrown on the stripe, so wrapped there, as a copied read's is.
            CorruptBlockException bad = assertInstanceOf(CorruptBlockException.class,
                    assertInstanceOf(java.io.UncheckedIOException.class, e.getCause()).getCause());
            assertEquals(37L * BLOCK, bad.offset());
            assertEquals(BLOCK, bad.length());
            assertEquals(1, store.residentReads.sum());
            assertArrayEquals(Arrays.copyOfRange(data, 40 * BLOCK, 56 * BLOCK), TestBuffers.drain(clientRead(store, 40L * BLOCK, 16 * BLOCK), 16 * BLOCK),
                    "the blocks around it still read");
        }
    }

    @Test
    void aChunkTrimmedWholeLeavesNoMappingBehindSoItsBlocksAreFreed() throws Exception {
        byte[] data = random(64 * BLOCK, 5);
        try (ChunkStore store = new ChunkStore(dir, 2)) {
            ChunkChecksumTest.write(store, C, 0, data);
            ByteBuf out = clientRead(store, 0, 64 * BLOCK); // a view still out when the chunk goes
            assertEquals(1, store.residentReads.sum());
            assertEquals(1, Mappings.of(dir.resolve("chunks/3/1")));
            store.trimAsync(1, 2, C, 0, 64L * BLOCK, true).get(10, TimeUnit.SECONDS);
            assertEquals(1, Mappings.of(dir.resolve("chunks/3/1")), "the file is deleted, its mapping held by the view");
            assertArrayEquals(data, TestBuffers.drain(out, 64 * BLOCK), "the view still reads what it was");
            assertEquals(0, Mappings.of(dir.resolve("chunks/3/1")), "unmapped with the view: nothing holds the deleted file's blocks");
        }
    }

    @Test
    void afterCompactionTheViewIsOfTheNewFile() throws Exception {
        byte[] data = random(64 * BLOCK, 3);
        byte[] later = random(4 * BLOCK, 4);
        try (ChunkStore store = new ChunkStore(dir, 2)) {
            ChunkChecksumTest.write(store, C, 0, data);
            clientRead(store, 0, 64 * BLOCK).release(); // mapped now
            store.onStripeNow(C, () -> {
                ChunkFile f = store.openChunk(C);
                io.fastblock.storage.io.FileIo temp = io.fastblock.storage.io.FileIoFactory.real().open(dir.resolve("compact"), true);
                temp.writeFully(java.nio.ByteBuffer.wrap(data), 0);
                f.replaceData(temp, io.fastblock.storage.io.FileIoFactory.real());
                return null;
            });
            ChunkChecksumTest.write(store, C, 8L * BLOCK, later); // into the new file only
            System.arraycopy(later, 0, data, 8 * BLOCK, later.length);
            assertArrayEquals(data, TestBuffers.drain(clientRead(store, 0, 64 * BLOCK), 64 * BLOCK));
            assertEquals(2, store.residentReads.sum());
        }
    }

    /** A store of real files that keeps at most {@code limit} chunk files mapped. */
    private ChunkStore limitedStore(int ioThreads, int limit) throws Exception {
        return new ChunkStore(dir, ioThreads, io.fastblock.storage.io.FileIoFactory.real(), ChunkStore.DEFAULT_FLUSH_INTERVAL, limit);
    }

    /** Writes chunks (3, 0) .. (3, count - 1), {@code blocks} random blocks each; returns their bytes. */
    private static byte[][] writeChunks(ChunkStore store, int count, int blocks, int seed) throws Exception {
        byte[][] data = new byte[count][];
        for (int i = 0; i < count; i++) {
            data[i] = random(blocks * BLOCK, seed + i);
            ChunkChecksumTest.write(store, new ChunkId(3, i), 0, data[i]);
        }
        return data;
    }

    /** Mappings of chunks (3, 0) .. (3, count - 1) in this process. */
    private long mappedChunkFiles(int count) throws Exception {
        long mapped = 0;
        for (int j = 0; j < count; j++) {
            mapped += Mappings.of(dir.resolve("chunks/3/" + j));
        }
        return mapped;
    }

    @Test
    void aStoreKeepsNoMoreChunksMappedThanItsLimit() throws Exception {
        int chunks = 6;
        try (ChunkStore store = limitedStore(2, 2)) {
            byte[][] data = writeChunks(store, chunks, 64, 10);
            for (int round = 0; round < 2; round++) {
                for (int i = 0; i < chunks; i++) {
                    ByteBuf read = store.readAsync(new ChunkId(3, i), 0, 64 * BLOCK, PooledByteBufAllocator.DEFAULT)
                            .get(10, TimeUnit.SECONDS);
                    assertArrayEquals(data[i], TestBuffers.drain(read, 64 * BLOCK));
                    long mapped = mappedChunkFiles(chunks);
                    assertTrue(mapped <= 2, "at most 2 chunk files mapped, saw " + mapped);
                }
            }
            assertEquals(2 * chunks, store.residentReads.sum(), "every read a view: a cold chunk takes a slot");
            assertEquals(2, store.mappings().mapped());
            assertEquals(2 * chunks - 2, store.mappings().evictions());
        }
    }

    @Test
    void concurrentReadersOfManyChunksLeaveNoUncountedMapping() throws Exception {
        int chunks = 12;
        try (ChunkStore store = limitedStore(4, 3)) {
            byte[][] data = writeChunks(store, chunks, 32, 40);
            java.util.concurrent.atomic.AtomicReference<Throwable> failed = new java.util.concurrent.atomic.AtomicReference<>();
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
            Thread[] readers = new Thread[4];
            for (int t = 0; t < readers.length; t++) {
                java.util.Random rnd = new java.util.Random(t);
                readers[t] = new Thread(() -> {
                    try {
                        while (System.nanoTime() < until && failed.get() == null) {
                            int i = rnd.nextInt(chunks);
                            int first = rnd.nextInt(16);
                            ByteBuf read = store.readAsync(new ChunkId(3, i), (long) first * BLOCK, 16 * BLOCK,
                                    PooledByteBufAllocator.DEFAULT).get(10, TimeUnit.SECONDS);
                            byte[] got = TestBuffers.drain(read, 16 * BLOCK);
                            if (!Arrays.equals(Arrays.copyOfRange(data[i], first * BLOCK, (first + 16) * BLOCK), got)) {
                                throw new AssertionError("chunk " + i + " at block " + first + ": wrong bytes");
                            }
                        }
                    } catch (Throwable e) {
                        failed.compareAndSet(null, e);
                    }
                });
                readers[t].start();
            }
            for (Thread t : readers) {
                t.join();
            }
            if (failed.get() != null) {
                throw new AssertionError(failed.get());
            }
            assertTrue(store.residentReads.sum() > 100, "reads were views: " + store.residentReads.sum());
            assertTrue(store.mappings().evictions() > 50, "slots changed hands: " + store.mappings().evictions());
            long mapped = mappedChunkFiles(chunks);
            assertEquals(store.mappings().mapped(), mapped, "with every view released, the process maps what the budget counts");
            assertTrue(mapped <= 3);
        }
    }

    /**
     * A trim that cuts the data file must not leave a mapping that reaches past the file's new end.
     * Linux (6.18 here, ext4) keeps a large page-cache folio whole when a cut falls inside it, so
     * mincore calls its pages past the end resident, and reading them through the mapping is SIGBUS:
     * that killed a storage JVM (three servers) under iscsi-test-cu, whose tests unmap a LUN's last
     * blocks and read them back. One large write straight into the file makes such a folio.
     */
    @Test
    void aRangeTrimmedOffTheEndOfAMappedFileReadsAsZeros() throws Exception {
        int size = 1 << 20;
        byte[] data = random(size, 9);
        Path file = dir.resolve("chunks/3/1");
        try (ChunkStore store = new ChunkStore(dir, 2)) {
            ChunkChecksumTest.write(store, C, 0, data);
            store.force(C);
            PageCache.evict(file);
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
                ch.write(ByteBuffer.wrap(data), 0); // the same bytes, in one write: large folios
            }
            long tail = size - MIN;
            clientRead(store, tail, MIN).release();
            assertEquals(1, store.residentReads.sum(), "the end of the file was read through its mapping");

            trim(store, tail, MIN);
            assertArrayEquals(new byte[MIN], TestBuffers.drain(clientRead(store, tail, MIN), MIN));
            assertArrayEquals(Arrays.copyOfRange(data, 0, (int) tail), TestBuffers.drain(clientRead(store, 0, (int) tail), (int) tail),
                    "the bytes before the cut");
        }
    }

    @Test
    void aTrimToTheEndWhileAViewIsOutZerosTheRangeAndTheFileKeepsItsLength() throws Exception {
        int size = 1 << 20;
        byte[] data = random(size, 10);
        Path file = dir.resolve("chunks/3/1");
        try (ChunkStore store = new ChunkStore(dir, 2)) {
            ChunkChecksumTest.write(store, C, 0, data);
            long tail = size - MIN;
            ByteBuf out = clientRead(store, tail, MIN); // a view on its way to a socket
            assertTrue(out.isReadOnly());
            trim(store, tail, MIN);
            assertEquals(size, Files.size(file), "not cut under the mapping");
            assertArrayEquals(new byte[MIN], TestBuffers.drain(out, MIN), "the view shows the zeros, as the page cache does");
            assertArrayEquals(new byte[MIN], TestBuffers.drain(clientRead(store, tail, MIN), MIN));
            assertEquals(List.of(new Extents.Range(0, (int) tail)),
                    store.extents(C, 0, size).ranges(), "the range is no longer allocated");

            // With no view out, the next trim to the end cuts the file.
            long cut = tail - MIN;
            trim(store, cut, size - cut);
            assertEquals(cut, Files.size(file));
            assertArrayEquals(Arrays.copyOfRange(data, 0, (int) cut), TestBuffers.drain(clientRead(store, 0, (int) cut), (int) cut));
            assertArrayEquals(new byte[2 * MIN], TestBuffers.drain(clientRead(store, cut, 2 * MIN), 2 * MIN));
        }
    }
}
