package io.fastblock.storage.log;

import static io.fastblock.storage.log.LogFixture.bytes;
import static io.fastblock.storage.log.LogFixture.cleanUntilDone;
import static io.fastblock.storage.log.LogFixture.read;
import static io.fastblock.storage.log.LogFixture.write;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.StorageMetrics;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The cleaner waits for a pause in foreground writes unless the log has grown past twice what its target allows. */
class LogCleanerBusyTest {
    private static final long SEGMENT = 64 * 1024;
    private static final int AREA = 128 * 1024;
    /** About 15 records to a segment, so the emptiest segment still has several live pieces. */
    private static final int PIECE = 4096;
    /** Lazy 0.5 (0.25 while busy), busy at 1 000 bytes/s, no pacing, one piece per batch, no space pressure. */
    private static final LogCleaner.Settings SETTINGS =
            new LogCleaner.Settings(0.5, 0.95, 0, 1.0, PIECE, 5, 0.85, 0, 1_000);
    private static final double BUSY = 1e6;

    @TempDir
    Path dir;
    private LogStore store;
    private byte[] kept;
    private int chunks;

    @AfterEach
    void close() throws IOException {
        if (store != null) {
            store.close();
        }
    }

    /**
     * {@code chunks} chunks written piece by piece in turn (so each segment holds pieces of all of
     * them), then every chunk but the first trimmed whole: every segment is about {@code 1/chunks}
     * live, and no segment is empty, so a cleaner can only raise utilisation by copying.
     */
    private LogStore interleavedLog(Path at, int chunks) throws Exception {
        LogStore s = LogStore.open(at, SEGMENT, new StorageMetrics());
        kept = new byte[AREA];
        for (int off = 0; off < AREA; off += PIECE) {
            for (int c = 0; c < chunks; c++) {
                byte[] d = bytes(PIECE, off * 31L + c);
                if (c == 0) {
                    System.arraycopy(d, 0, kept, off, PIECE);
                }
                write(s, new ChunkId(6, c), off, d);
            }
        }
        for (int c = 1; c < chunks; c++) {
            s.trim(new ChunkId(6, c), 0, 1, AREA).get(30, TimeUnit.SECONDS);
        }
        this.chunks = chunks;
        return s;
    }

    private void verifyAll() throws IOException {
        assertArrayEquals(kept, read(store, new ChunkId(6, 0), 0, AREA), "the kept chunk");
        for (int c = 1; c < chunks; c++) {
            assertArrayEquals(new byte[AREA], read(store, new ChunkId(6, c), 0, AREA), "trimmed chunk " + c);
        }
    }

    private double moved() {
        return store.logMetrics().cleanerBytesMoved.count();
    }

    @Test
    void whileWritesAreBusyALogBetweenHalfTheTargetAndTheTargetWaitsForAPause() throws Exception {
        store = interleavedLog(dir, 3);
        double start = store.utilisation();
        assertTrue(start > 0.27 && start < 0.48, "setup: utilisation " + start);
        AtomicReference<Double> rate = new AtomicReference<>(BUSY);
        LogCleaner cleaner = new LogCleaner(store, SETTINGS, () -> 0.5, rate::get);

        assertEquals(0.25, cleaner.target());
        cleanUntilDone(cleaner);
        assertEquals(0.0, moved(), "busy, and the log is above half the target: nothing copied");
        verifyAll();

        rate.set(999.0); // below the busy rate: a pause
        assertEquals(0.5, cleaner.target());
        cleanUntilDone(cleaner);
        assertTrue(moved() > 0, "in the pause the cleaner copies");
        assertTrue(store.utilisation() >= 0.5, "and reaches the target: " + store.utilisation());
        verifyAll();
    }

    @Test
    void whileWritesAreBusyALogBelowHalfTheTargetIsCleanedToHalfTheTargetOnly() throws Exception {
        store = interleavedLog(dir.resolve("busy"), 5);
        double start = store.utilisation();
        assertTrue(start < 0.22, "setup: utilisation " + start);
        cleanUntilDone(new LogCleaner(store, SETTINGS, () -> 0.5, () -> BUSY));
        double busyMoved = moved();
        double busyEnd = store.utilisation();
        assertTrue(busyMoved > 0, "below half the target the cleaner copies even while busy");
        assertTrue(busyEnd >= 0.25, "to half the target: " + busyEnd);
        verifyAll();
        store.close();

        store = interleavedLog(dir.resolve("quiet"), 5);
        assertEquals(start, store.utilisation(), 1e-9, "the same log");
        cleanUntilDone(new LogCleaner(store, SETTINGS, () -> 0.5, () -> 0.0));
        System.out.printf("a %.2f-live log: busy cleaning moved %.0f bytes (ends %.2f), quiet cleaning %.0f (ends %.2f)%n",
                start, busyMoved, busyEnd, moved(), store.utilisation());
        assertTrue(busyEnd < 0.5, "busy cleaning stopped short of the lazy target: " + busyEnd);
        assertTrue(store.utilisation() >= 0.5);
        assertTrue(moved() > busyMoved, "quiet " + moved() + " busy " + busyMoved);
        verifyAll();
    }

    @Test
    void aSegmentHalfCopiedIsLeftWhenWritesStartAndFinishedInTheNextPause() throws Exception {
        store = interleavedLog(dir, 3);
        AtomicLong cleaning = new AtomicLong(-1);
        AtomicBoolean paused = new AtomicBoolean();
        // Writes start as soon as the cleaner has moved its first batch, and pause when the test says.
        LogCleaner cleaner = new LogCleaner(store, SETTINGS, () -> 0.5, () -> moved() > 0 && !paused.get() ? BUSY : 0.0)
                .onStep((step, segment) -> {
                    if (step == LogCleaner.Step.PIECES_FOUND) {
                        cleaning.compareAndSet(-1, segment);
                    }
                });
        assertEquals(0, cleaner.cleanOnce(), "the segment is left, not freed");
        long segment = cleaning.get();
        assertTrue(segment >= 0, "the cleaner started on a segment");
        assertEquals(1.0, store.logMetrics().cleanerYields.count());
        assertEquals(PIECE, moved(), "one batch of one piece moved before the writes were seen");
        assertTrue(store.liveBytes().of(segment) > 0, "the segment still holds live bytes");
        verifyAll();
        assertEquals(0, cleaner.cleanOnce(), "still busy: nothing more");
        assertEquals(PIECE, moved());
        verifyAll();

        paused.set(true);
        assertTrue(cleanUntilDone(cleaner) > 0);
        assertEquals(0, store.liveBytes().of(segment), "the half-copied segment was finished in the pause");
        assertTrue(store.sealedSegments().stream().noneMatch(s -> s.number() == segment), "and deleted");
        assertTrue(store.utilisation() >= 0.5, "utilisation " + store.utilisation());
        verifyAll();
    }

    @Test
    void aLogReopenedWithASegmentHalfCopiedReadsTheSameAndIsCleanedLater() throws Exception {
        store = interleavedLog(dir, 3);
        LogCleaner cleaner = new LogCleaner(store, SETTINGS, () -> 0.5, () -> moved() > 0 ? BUSY : 0.0);
        assertEquals(0, cleaner.cleanOnce());
        assertEquals(1.0, store.logMetrics().cleanerYields.count(), "setup: a segment left half copied");
        store.close();

        store = LogStore.open(dir, SEGMENT, new StorageMetrics());
        verifyAll();
        double before = store.utilisation();
        assertTrue(before < 0.5, "setup: utilisation " + before);
        assertTrue(cleanUntilDone(new LogCleaner(store, SETTINGS, () -> 0.5, () -> 0.0)) > 0);
        assertTrue(store.utilisation() >= 0.5, "utilisation " + store.utilisation());
        verifyAll();
        store.close();

        store = LogStore.open(dir, SEGMENT, new StorageMetrics());
        verifyAll();
    }

    @Test
    void theRateIsMeasuredOverWholeWindows() {
        AtomicLong bytes = new AtomicLong(1_000);
        AtomicLong nanos = new AtomicLong(5_000_000_000L);
        AppendRate rate = new AppendRate(bytes::get, nanos::get);
        bytes.addAndGet(1_000_000);
        nanos.addAndGet(AppendRate.WINDOW_NANOS / 2);
        assertEquals(0.0, rate.perSecond(), "no whole window yet");
        nanos.addAndGet(AppendRate.WINDOW_NANOS / 2);
        assertEquals(1_000_000 * 1e9 / AppendRate.WINDOW_NANOS, rate.perSecond(), 1e-6);
        nanos.addAndGet(AppendRate.WINDOW_NANOS / 4);
        assertEquals(1_000_000 * 1e9 / AppendRate.WINDOW_NANOS, rate.perSecond(), 1e-6, "inside a window: the last one's rate");
        nanos.addAndGet(AppendRate.WINDOW_NANOS);
        assertEquals(0.0, rate.perSecond(), "a window without appends");
    }

    @Test
    void foregroundWritesAreCountedAndTheDefaultsHoldTheCleanerAboveAQuarterLive() throws Exception {
        store = LogStore.open(dir, SEGMENT, new StorageMetrics());
        assertEquals(0, store.foregroundBytes());
        write(store, new ChunkId(6, 0), 0, bytes(PIECE, 1));
        write(store, new ChunkId(6, 1), 8192, bytes(2 * PIECE, 2));
        assertEquals(3 * PIECE, store.foregroundBytes());

        assertEquals(0.25, LogCleaner.Settings.DEFAULTS.busyUtilisation());
        assertEquals(LogCleaner.Settings.DEFAULT_BUSY_BYTES_PER_SECOND, LogCleaner.Settings.DEFAULTS.withTarget(0.8).busyBytesPerSecond());
        assertEquals(0.4, LogCleaner.Settings.DEFAULTS.withTarget(0.8).busyUtilisation(), 1e-12);
        assertThrows(IllegalArgumentException.class, () -> new LogCleaner.Settings(0.5, 0.95, 0, 1.0, PIECE, 5, 0.85, 0, -1));
        assertFalse(new LogCleaner.Settings(0.5, 0.95, 0, 1.0, PIECE, 5).busyBytesPerSecond() > 0, "tests' settings are never busy");
    }
}
