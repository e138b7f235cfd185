package io.fastblock.storage.log;

import static io.fastblock.storage.log.LogFixture.bytes;
import static io.fastblock.storage.log.LogFixture.read;
import static io.fastblock.storage.log.LogFixture.write;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.Extents;
import io.fastblock.storage.StorageMetrics;
import io.fastblock.storage.chunk.ChunkStore;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Trim records in the log: holes in the index that hide older records and the base file, through replay, cleaning and folding. */
class LogTrimTest {
    private static final ChunkId CHUNK = new ChunkId(9, 1);
    private static final int K = 1024;

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
        store = LogStore.open(dir, 64 * K, metrics, new ChunkStoreBase(chunks), 0);
    }

    private void trim(long offset, int length) throws Exception {
        store.trim(CHUNK, offset, 1, length).get(30, TimeUnit.SECONDS);
    }

    /** Reopens with the index deleted: every record of the log is replayed, in order. */
    private void reopenReplayingEverything() throws IOException {
        store.close();
        chunks.close();
        try (Stream<Path> files = Files.walk(dir.resolve("index"))) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
        open();
    }

    @Test
    void aTrimHidesLogAndBaseBytesAndAReplayKeepsItSo() throws Exception {
        open();
        byte[] base = bytes(40 * K, 1);
        chunks.writeAsync(CHUNK, 0, Unpooled.wrappedBuffer(base)).get(10, TimeUnit.SECONDS);
        byte[] logged = bytes(8 * K, 2);
        write(store, CHUNK, 8 * K, logged);
        write(store, CHUNK, 48 * K, bytes(4 * K, 3));
        trim(4 * K, 16 * K);
        byte[] want = base.clone();
        System.arraycopy(logged, 0, want, 8 * K, 8 * K);
        Arrays.fill(want, 4 * K, 20 * K, (byte) 0);
        assertArrayEquals(want, read(store, CHUNK, 0, 40 * K));
        Extents expected = new Extents.Builder().add(0, 4 * K).add(20 * K, 20 * K).add(48 * K, 4 * K).build();
        assertEquals(expected, store.extents(CHUNK, 0, 1 << 20));

        reopenReplayingEverything();
        assertTrue(store.recovery().replayedRecords() >= 3);
        assertArrayEquals(want, read(store, CHUNK, 0, 40 * K), "replaying the log does not resurrect trimmed bytes");
        assertEquals(expected, store.extents(CHUNK, 0, 1 << 20));

        // A later write over part of the hole wins there.
        byte[] again = bytes(4 * K, 4);
        write(store, CHUNK, 8 * K, again);
        System.arraycopy(again, 0, want, 8 * K, 4 * K);
        assertArrayEquals(want, read(store, CHUNK, 0, 40 * K));
        assertEquals(new Extents.Builder().add(0, 4 * K).add(8 * K, 4 * K).add(20 * K, 20 * K).build(),
                store.extents(CHUNK, 0, 40 * K));
    }

    /**
     * Allocation is by whole blocks, as in a chunk file: a query that starts or ends inside a block
     * answers for the block, so a resync copying from the middle of a partly written block is not
     * told the block is unallocated (it then gave the block back, losing the written part's allocation).
     */
    @Test
    void extentsAnswerForWholeBlocksClippedToTheQuery() throws Exception {
        open();
        write(store, CHUNK, 0, bytes(5000, 1));                // log data in block 1 up to byte 5000
        chunks.writeAsync(CHUNK, 16 * K, Unpooled.wrappedBuffer(bytes(100, 2))).get(10, TimeUnit.SECONDS); // base block 4
        assertEquals(Extents.of(java.util.List.of(new Extents.Range(5000, 3000))), store.extents(CHUNK, 5000, 3000));
        assertEquals(Extents.of(java.util.List.of(new Extents.Range(17000, 100))), store.extents(CHUNK, 17000, 100));
        assertEquals(Extents.NONE, store.extents(CHUNK, 8 * K + 10, 4000));
        trim(16 * K, 4 * K);
        assertEquals(Extents.NONE, store.extents(CHUNK, 17000, 100), "a trim's hole hides the base block");
    }

    @Test
    void trimmedRecordsAreDeadSoTheCleanerFreesTheirSegments() throws Exception {
        open();
        for (int i = 0; i < 40; i++) {
            write(store, CHUNK, (long) i * 8 * K, bytes(8 * K, i));
        }
        long live = store.liveBytes().total();
        assertEquals(320 * K, live);
        long disk = store.diskBytes();
        trim(0, 320 * K);
        assertEquals(0, store.liveBytes().total(), "nothing the trim covered is live");
        write(store, CHUNK, 0, bytes(100, 99)); // moves the checkpoint on
        LogCleaner.Settings eager = new LogCleaner.Settings(0.85, 0.95, 0, 1.0, 16 * K, 5);
        new LogCleaner(store, eager).cleanOnce();
        assertTrue(store.diskBytes() < disk / 2, "disk " + store.diskBytes() + " of " + disk + " before");
        assertArrayEquals(new byte[8 * K], read(store, CHUNK, 8 * K, 8 * K));
        store.close();
        chunks.close();
        open();
        assertArrayEquals(new byte[8 * K], read(store, CHUNK, 8 * K, 8 * K), "after cleaning and a restart");
        assertEquals(new Extents.Builder().add(0, 4 * K).build(), store.extents(CHUNK, 0, 320 * K));
    }

    @Test
    void foldingCarriesTheTrimIntoTheBaseFile() throws Exception {
        open();
        byte[] base = bytes(64 * K, 5);
        chunks.writeAsync(CHUNK, 0, Unpooled.wrappedBuffer(base)).get(10, TimeUnit.SECONDS);
        trim(16 * K, 16 * K);
        trim(48 * K, 16 * K);
        store.fold(CHUNK).get(30, TimeUnit.SECONDS);
        assertEquals(0, store.scanIndex(null, 100).size(), "the holes left the index");
        byte[] want = base.clone();
        Arrays.fill(want, 16 * K, 32 * K, (byte) 0);
        Arrays.fill(want, 48 * K, 64 * K, (byte) 0);
        assertArrayEquals(want, read(store, CHUNK, 0, 64 * K));
        assertEquals(new Extents.Builder().add(0, 16 * K).add(32 * K, 16 * K).build(), chunks.extents(CHUNK, 0, 64 * K));
        assertEquals(48 * K, chunks.sizeOf(CHUNK), "a trim reaching the end cut the base file");
        store.close();
        chunks.close();
        open();
        assertArrayEquals(want, read(store, CHUNK, 0, 64 * K));
    }
}
