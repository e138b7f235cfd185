package io.fastblock.storage.log;

import static io.fastblock.storage.log.LogFixture.bytes;
import static io.fastblock.storage.log.LogFixture.read;
import static io.fastblock.storage.log.LogFixture.write;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.StorageMetrics;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class LogCleanerTest {
    private static final long SEGMENT = 64 * 1024;
    private static final int AREA = 512 * 1024;
    private static final ChunkId[] CHUNKS = {new ChunkId(3, 0), new ChunkId(3, 1)};
    /** Eager settings: no pacing, small batches, so tests exercise many batches quickly. */
    private static final LogCleaner.Settings EAGER = new LogCleaner.Settings(0.85, 0.95, 0, 1.0, 16 * 1024, 5);

    @TempDir
    Path dir;
    private final StorageMetrics metrics = new StorageMetrics();
    private LogStore store;
    private final byte[][] ref = new byte[CHUNKS.length][AREA];

    @AfterEach
    void close() throws IOException {
        if (store != null) {
            store.close();
        }
    }

    private LogStore open() throws IOException {
        store = LogStore.open(dir, SEGMENT, metrics);
        return store;
    }

    private void reopen() throws IOException {
        store.close();
        store = null;
        open();
    }

    /** Random overwrites of both chunks' areas, mirrored in {@link #ref}. */
    private void churn(long seed, int rounds) throws Exception {
        Random r = new Random(seed);
        for (int round = 0; round < rounds; round++) {
            for (int i = 0; i < 8; i++) {
                int c = r.nextInt(CHUNKS.length);
                int len = 512 * (1 + r.nextInt(24));
                int off = r.nextInt(AREA - len);
                byte[] d = bytes(len, r.nextLong());
                System.arraycopy(d, 0, ref[c], off, len);
                store.append(CHUNKS[c], off, round, Unpooled.wrappedBuffer(d)).get(10, TimeUnit.SECONDS);
            }
        }
    }

    private void verifyAll() throws IOException {
        for (int c = 0; c < CHUNKS.length; c++) {
            assertArrayEquals(ref[c], read(store, CHUNKS[c], 0, AREA), "chunk " + CHUNKS[c]);
        }
    }

    @Test
    void cleanerBringsDiskUseBackNearLiveDataAndLosesNothing() throws Exception {
        open();
        churn(1, 120);
        long live = store.liveBytes().total();
        long diskBefore = store.diskBytes();
        assertTrue(diskBefore > 3 * live, "churn left mostly dead bytes: disk " + diskBefore + " live " + live);
        int freed = LogFixture.cleanUntilDone(new LogCleaner(store, EAGER));
        assertEquals(live, store.liveBytes().total(), "cleaning moves live bytes, it does not change them");
        System.out.printf("cleaner: live %d, disk %d -> %d, utilisation %.3f, freed %d segments, moved %.0f bytes%n",
                live, diskBefore, store.diskBytes(), store.utilisation(), freed,
                store.logMetrics().cleanerBytesMoved.count());
        assertTrue(store.diskBytes() <= 1.3 * live + 2 * SEGMENT, "disk " + store.diskBytes() + " live " + live);
        assertTrue(freed > 10);
        assertEquals(freed, metrics.registry().get("fastblock.log.cleaner.segments.freed").counter().count());
        assertTrue(metrics.registry().get("fastblock.log.cleaner.bytes.moved").counter().count() > 0);
        verifyAll();
        Map<Long, Long> liveBySegment = store.liveBytes().snapshot();
        liveBySegment.values().removeIf(v -> v == 0);
        reopen();
        verifyAll();
        Map<Long, Long> again = store.liveBytes().snapshot();
        again.values().removeIf(v -> v == 0);
        assertEquals(liveBySegment, again, "moved records are accounted the same after replay-free reopen");
        churn(2, 20);
        verifyAll();
    }

    @Test
    void readsRacingTheCleanerStayCorrect() throws Exception {
        open();
        churn(3, 120);
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        List<Future<Integer>> readers = new ArrayList<>();
        try (LogCleaner cleaner = new LogCleaner(store, EAGER)) {
            for (int t = 0; t < 2; t++) {
                long seed = t;
                readers.add(pool.submit(() -> {
                    Random r = new Random(seed);
                    int reads = 0;
                    while (!stop.get()) {
                        int c = r.nextInt(CHUNKS.length);
                        int len = 1 + r.nextInt(64 * 1024);
                        int off = r.nextInt(AREA - len);
                        assertArrayEquals(Arrays.copyOfRange(ref[c], off, off + len), read(store, CHUNKS[c], off, len));
                        reads++;
                    }
                    return reads;
                }));
            }
            cleaner.start();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (store.utilisation() < 0.75 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            Thread.sleep(200);
        } finally {
            stop.set(true);
            pool.shutdown();
        }
        int reads = 0;
        for (Future<Integer> f : readers) {
            reads += f.get(30, TimeUnit.SECONDS);
        }
        assertTrue(store.logMetrics().cleanerSegmentsFreed.count() > 10, "segments were deleted under the readers");
        assertTrue(reads > 0);
        verifyAll();
    }

    /** A crash at any step of cleaning: reopening finds every byte, and cleaning can finish afterwards. */
    @ParameterizedTest
    @EnumSource(LogCleaner.Step.class)
    void stoppingTheCleanerAtAnyStepLosesNothing(LogCleaner.Step at) throws Exception {
        open();
        churn(4, 60);
        class Crash extends IOException {
            Crash() {
                super("simulated crash at " + at);
            }
        }
        LogCleaner cleaner = new LogCleaner(store, EAGER).onStep((step, segment) -> {
            if (step == at) {
                throw new Crash();
            }
        });
        assertThrows(Crash.class, () -> LogFixture.cleanUntilDone(cleaner));
        reopen();
        verifyAll();
        LogFixture.cleanUntilDone(new LogCleaner(store, EAGER));
        verifyAll();
        reopen();
        verifyAll();
        assertTrue(store.diskBytes() <= 1.3 * store.liveBytes().total() + 2 * SEGMENT);
    }

    /**
     * The index loses everything since before cleaning began (power loss before its WAL was
     * synced) while the log kept the moved records and a newer write made after the cleaner read
     * the old data: replay applies the moved records only where the index still reads their origin.
     */
    @Test
    void replayedMovedRecordsNeverShadowNewerWrites() throws Exception {
        open();
        churn(5, 60);
        store.close();
        store = null;
        Path snapshot = dir.resolve("index-before-cleaning");
        LogStoreTest.copyTree(dir.resolve("index"), snapshot);
        open();
        List<long[]> overwritten = new ArrayList<>();
        LogCleaner cleaner = new LogCleaner(store, EAGER).onStep((step, segment) -> {
            if (step == LogCleaner.Step.PIECES_FOUND && overwritten.isEmpty()) {
                // overwrite part of what the cleaner is about to move, after it read where it lives
                for (LogStore.LivePiece p : store.livePieces(segment, 1 << 20)) {
                    int c = p.chunk().equals(CHUNKS[0]) ? 0 : 1;
                    int len = (int) Math.min(300, p.end() - p.start());
                    byte[] d = bytes(len, p.start());
                    try {
                        write(store, p.chunk(), p.start(), d);
                    } catch (Exception e) {
                        throw new IOException(e);
                    }
                    System.arraycopy(d, 0, ref[c], (int) p.start(), len);
                    overwritten.add(new long[] {c, p.start(), len});
                }
            }
            if (step == LogCleaner.Step.RECORDS_MOVED) {
                throw new IOException("simulated power loss");
            }
        });
        assertThrows(IOException.class, () -> LogFixture.cleanUntilDone(cleaner));
        assertTrue(!overwritten.isEmpty());
        verifyAll();
        store.close();
        store = null;
        LogStoreTest.replaceTree(snapshot, dir.resolve("index"));
        open();
        assertTrue(store.recovery().replayedRecords() > overwritten.size(), "newer writes and moved records replayed");
        verifyAll();
        LogFixture.cleanUntilDone(new LogCleaner(store, EAGER));
        verifyAll();
    }

    @Test
    void aSegmentWithACorruptLiveRecordIsLeftAloneAndTheRestIsCleaned() throws Exception {
        open();
        churn(6, 120);
        LogStore.LivePiece bad = null;
        for (LogSegment s : store.sealedSegments()) {
            bad = store.livePieces(s.number(), 1 << 20).stream()
                    .filter(p -> p.extent().runBytes() == LogRecord.HEADER + p.extent().runData())
                    .findFirst().orElse(null);
            if (bad != null) {
                break;
            }
        }
        long segment = bad.extent().segment();
        long at = bad.extent().recordPosition() + LogRecord.HEADER + bad.extent().dataOffset();
        try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(LogSegment.pathOf(dir.resolve("log"), segment).toFile(), "rw")) {
            f.seek(at);
            int v = f.read();
            f.seek(at);
            f.write(v ^ 0x10);
        }
        long before = store.diskBytes();
        LogFixture.cleanUntilDone(new LogCleaner(store, EAGER));
        assertTrue(Files.exists(LogSegment.pathOf(dir.resolve("log"), segment)), "the damaged segment stays for repair");
        assertTrue(store.diskBytes() < before / 2, before + " -> " + store.diskBytes());
        LogStore.LivePiece damaged = bad;
        assertThrows(CorruptRecordException.class, () -> read(store, damaged.chunk(), damaged.start(), 1));
        int c = bad.chunk().equals(CHUNKS[0]) ? 0 : 1;
        int other = 1 - c;
        assertArrayEquals(ref[other], read(store, CHUNKS[other], 0, AREA));
    }

    @Test
    void theActiveSegmentIsNeverCleaned() throws Exception {
        open();
        write(store, CHUNKS[0], 0, bytes(1000, 1));
        write(store, CHUNKS[0], 0, bytes(1000, 2));
        assertEquals(0, new LogCleaner(store, EAGER).cleanOnce());
        try (Stream<Path> files = Files.list(dir.resolve("log"))) {
            assertEquals(1, files.count());
        }
        assertArrayEquals(bytes(1000, 2), read(store, CHUNKS[0], 0, 1000));
    }
}
