package io.fastblock.storage.log;

import static io.fastblock.storage.log.LogFixture.bytes;
import static io.fastblock.storage.log.LogFixture.read;
import static io.fastblock.storage.log.LogFixture.write;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.StorageMetrics;
import io.fastblock.storage.TestBuffers;
import io.fastblock.storage.chunk.ChunkStore;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FoldTest {
    private static final ChunkId CHUNK = new ChunkId(4, 2);
    private static final ChunkId OTHER = new ChunkId(4, 3);
    private static final int AREA = 256 * 1024;

    @TempDir
    Path dir;
    private final StorageMetrics metrics = new StorageMetrics();
    private ChunkStore chunks;
    private LogStore store;

    @AfterEach
    void close() throws IOException {
        if (store != null) {
            store.close();
        }
        if (chunks != null) {
            chunks.close();
        }
    }

    private void open() throws IOException {
        chunks = new ChunkStore(dir, 2);
        store = LogStore.open(dir, 64 * 1024, metrics, new ChunkStoreBase(chunks), 0);
    }

    private void reopen() throws IOException {
        store.close();
        chunks.close();
        open();
    }

    private byte[] baseFile(ChunkId chunk, int length) throws IOException {
        return TestBuffers.drain(chunks.read(chunk, 0, length, UnpooledByteBufAllocator.DEFAULT), length);
    }

    private long keysOf(ChunkId chunk) throws IOException {
        return store.scanIndex(null, Integer.MAX_VALUE).stream().filter(e -> e.chunk().equals(chunk)).count();
    }

    @Test
    void readsTakeTheLogFirstThenTheBaseFileThenZeros() throws Exception {
        open();
        byte[] base = bytes(40_000, 1);
        chunks.writeAsync(CHUNK, 0, Unpooled.wrappedBuffer(base)).get(10, TimeUnit.SECONDS);
        byte[] logged = bytes(5_000, 2);
        write(store, CHUNK, 30_000, logged);
        byte[] want = new byte[50_000];
        System.arraycopy(base, 0, want, 0, base.length);
        System.arraycopy(logged, 0, want, 30_000, logged.length);
        assertArrayEquals(want, read(store, CHUNK, 0, want.length));
        assertArrayEquals(new byte[100], read(store, OTHER, 0, 100), "no log, no base file: zeros");
    }

    @Test
    void foldMovesEveryLogExtentIntoTheBaseFileAndEmptiesTheIndexForGood() throws Exception {
        open();
        byte[] ref = new byte[AREA];
        Random r = new Random(7);
        for (int i = 0; i < 200; i++) {
            int len = 1 + r.nextInt(8000);
            int off = r.nextInt(AREA - len);
            byte[] d = bytes(len, i);
            write(store, CHUNK, off, d);
            System.arraycopy(d, 0, ref, off, len);
        }
        byte[] other = bytes(3000, 3);
        write(store, OTHER, 100, other);
        long liveBefore = store.liveBytes().total();
        assertTrue(keysOf(CHUNK) > 0);

        store.fold(CHUNK).get(30, TimeUnit.SECONDS);

        assertEquals(0, keysOf(CHUNK), "the log holds nothing for a folded chunk");
        assertEquals(1, keysOf(OTHER), "other chunks keep their extents");
        assertEquals(3000, store.liveBytes().total(), "live bytes drop by what was folded (from " + liveBefore + ")");
        assertEquals(1.0, metrics.registry().get("fastblock.log.folds").counter().count());
        assertArrayEquals(ref, baseFile(CHUNK, AREA));
        assertArrayEquals(ref, read(store, CHUNK, 0, AREA));
        // in-place writes after the fold are not shadowed by old log extents
        byte[] inPlace = bytes(9000, 4);
        chunks.writeAsync(CHUNK, 1000, Unpooled.wrappedBuffer(inPlace)).get(10, TimeUnit.SECONDS);
        System.arraycopy(inPlace, 0, ref, 1000, inPlace.length);
        assertArrayEquals(ref, read(store, CHUNK, 0, AREA));
        reopen();
        assertEquals(0, keysOf(CHUNK), "a restart does not replay folded records back into the index");
        assertEquals(0, store.recovery().replayedRecords());
        assertArrayEquals(ref, read(store, CHUNK, 0, AREA));
        assertArrayEquals(other, read(store, OTHER, 100, 3000));
        // folded segments are dead now: the cleaner frees them
        LogCleaner.Settings eager = new LogCleaner.Settings(0.85, 0.95, 0, 1.0, 16 * 1024, 5);
        new LogCleaner(store, eager).cleanOnce();
        assertTrue(store.diskBytes() < 2 * 64 * 1024 + 3000 + LogRecord.HEADER, "disk " + store.diskBytes());
        assertArrayEquals(ref, read(store, CHUNK, 0, AREA));
    }

    /** Outside the contract (appends go on during the fold), reads must still be right: bytes written meanwhile stay in the log. */
    @Test
    void appendsRacingAFoldKeepTheirBytes() throws Exception {
        open();
        byte[] ref = new byte[AREA];
        Random r = new Random(11);
        java.util.concurrent.ExecutorService folder = java.util.concurrent.Executors.newSingleThreadExecutor();
        // Folding starts only once the log holds data, so at least the first fold has work to race with.
        java.util.concurrent.CountDownLatch logHasData = new java.util.concurrent.CountDownLatch(20);
        try {
            java.util.concurrent.Future<?> folds = folder.submit(() -> {
                logHasData.await(30, TimeUnit.SECONDS);
                for (int i = 0; i < 20; i++) {
                    store.fold(CHUNK).get(30, TimeUnit.SECONDS);
                }
                return null;
            });
            int i = 0;
            while (!folds.isDone() || i < 200) {
                int len = 1 + r.nextInt(6000);
                int off = r.nextInt(AREA - len);
                byte[] d = bytes(len, 1000 + i++);
                write(store, CHUNK, off, d);
                System.arraycopy(d, 0, ref, off, len);
                logHasData.countDown();
            }
            folds.get();
        } finally {
            folder.shutdown();
        }
        assertTrue(store.logMetrics().folds.count() >= 1, "folds ran while appends went on");
        assertArrayEquals(ref, read(store, CHUNK, 0, AREA));
        reopen();
        assertArrayEquals(ref, read(store, CHUNK, 0, AREA));
        store.fold(CHUNK).get(30, TimeUnit.SECONDS);
        assertEquals(0, keysOf(CHUNK));
        assertArrayEquals(ref, baseFile(CHUNK, AREA));
    }

    @Test
    void foldOfAChunkWithoutLogDataIsANoOp() throws Exception {
        open();
        store.fold(CHUNK).get(10, TimeUnit.SECONDS);
        assertEquals(0.0, store.logMetrics().folds.count());
    }

    /** The compare-and-set under fold: bytes rewritten after the fold read them stay in the index. */
    @Test
    void removeKeepsBytesThatNoLongerReadFromTheFoldedRun(@TempDir Path indexDir) throws Exception {
        try (ExtentIndex index = ExtentIndex.open(indexDir)) {
            index.apply(List.of(new ExtentIndex.IndexedWrite(CHUNK, 0, 1000, 1, 1, 0)), new LogPosition(1, 1044));
            // a newer write into the middle, after the fold took its snapshot
            index.apply(List.of(new ExtentIndex.IndexedWrite(CHUNK, 400, 100, 2, 1, 1044)), new LogPosition(1, 1188));
            var delta = index.remove(List.of(new ExtentIndex.Piece(CHUNK, 0, 1000, 1, 0)));
            assertEquals(-900L, delta.get(1L));
            List<Extent> left = index.find(CHUNK, 0, 1000);
            assertEquals(1, left.size());
            assertEquals(400, left.get(0).chunkOffset());
            assertEquals(1044, left.get(0).recordPosition());
        }
    }
}
