package io.fastblock.storage.log;

import static io.fastblock.storage.log.LogFixture.bytes;
import static io.fastblock.storage.log.LogFixture.cleanUntilDone;
import static io.fastblock.storage.log.LogFixture.read;
import static io.fastblock.storage.log.LogFixture.write;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.StorageMetrics;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The cleaner's lazy target and its stricter target while the log's filesystem is short of space. */
class LogCleanerTargetTest {
    private static final long SEGMENT = 64 * 1024;
    private static final int AREA = 512 * 1024;
    private static final int PIECE = 16 * 1024;
    private static final ChunkId[] CHUNKS = {new ChunkId(5, 0), new ChunkId(5, 1)};
    /** The server's policy without pacing: lazy 0.5, 0.85 at 10% free or less. */
    private static final LogCleaner.Settings LAZY = new LogCleaner.Settings(0.5, 0.95, 0, 1.0, 16 * 1024, 5, 0.85, 0.10);
    private static final LogCleaner.Settings STRICT = new LogCleaner.Settings(0.85, 0.95, 0, 1.0, 16 * 1024, 5);

    @TempDir
    Path dir;
    private LogStore store;
    private byte[][] ref;

    @AfterEach
    void close() throws IOException {
        if (store != null) {
            store.close();
        }
    }

    /** Both chunks written whole once, then {@code overwrites} random 16 KiB pieces rewritten: a log of known deadness. */
    private LogStore logWithOverwrites(Path at, long seed, int overwrites) throws Exception {
        LogStore s = LogStore.open(at, SEGMENT, new StorageMetrics()); // counters of its own per store
        ref = new byte[CHUNKS.length][AREA];
        Random r = new Random(seed);
        for (int c = 0; c < CHUNKS.length; c++) {
            for (int off = 0; off < AREA; off += PIECE) {
                byte[] d = bytes(PIECE, r.nextLong());
                System.arraycopy(d, 0, ref[c], off, PIECE);
                write(s, CHUNKS[c], off, d);
            }
        }
        for (int i = 0; i < overwrites; i++) {
            int c = r.nextInt(CHUNKS.length);
            int off = r.nextInt(AREA / PIECE) * PIECE;
            byte[] d = bytes(PIECE, r.nextLong());
            System.arraycopy(d, 0, ref[c], off, PIECE);
            write(s, CHUNKS[c], off, d);
        }
        return s;
    }

    private void verifyAll(LogStore s) throws IOException {
        for (int c = 0; c < CHUNKS.length; c++) {
            assertArrayEquals(ref[c], read(s, CHUNKS[c], 0, AREA), "chunk " + CHUNKS[c]);
        }
    }

    private java.util.Map<Long, Long> liveSegments() {
        java.util.Map<Long, Long> live = store.liveBytes().snapshot();
        live.values().removeIf(v -> v == 0);
        return live;
    }

    private double moved() {
        return store.logMetrics().cleanerBytesMoved.count();
    }

    @Test
    void aLogMoreThanHalfLiveIsLeftAloneUntilSpaceRunsShort() throws Exception {
        store = logWithOverwrites(dir, 1, 24); // 64 pieces of each chunk live, ~24 of 128 overwritten: ~0.8 live
        double before = store.utilisation();
        assertTrue(before > 0.6 && before < 0.85, "setup: utilisation " + before);
        AtomicReference<Double> free = new AtomicReference<>(0.40);
        LogCleaner cleaner = new LogCleaner(store, LAZY, free::get);

        java.util.Map<Long, Long> holdingLive = liveSegments();
        cleanUntilDone(cleaner);
        assertEquals(0.0, moved(), "above the lazy target nothing is copied");
        assertEquals(holdingLive, liveSegments(), "only segments without live bytes may go");
        assertEquals(0.5, cleaner.target());
        before = store.utilisation();

        free.set(0.10); // at the threshold: short of space
        assertEquals(0.85, cleaner.target());
        cleanUntilDone(cleaner);
        assertTrue(moved() > 0, "short of space the cleaner copies");
        assertTrue(store.utilisation() > before, "utilisation " + before + " -> " + store.utilisation());
        verifyAll(store);

        free.set(0.5); // space came back: the lazy target again, nothing more to do
        double moves = moved();
        cleanUntilDone(cleaner);
        assertEquals(moves, moved());
        assertEquals(0.5, cleaner.target());
        verifyAll(store);
    }

    @Test
    void theLazyTargetCopiesLessThanTheStrictOneFromTheSameLog() throws Exception {
        // 300 overwrites of 64 pieces per chunk: most of the log is dead, utilisation well under 0.5.
        LogStore strict = logWithOverwrites(dir.resolve("strict"), 7, 300);
        byte[][] strictRef = ref;
        double start = strict.utilisation();
        assertTrue(start < 0.4, "setup: utilisation " + start);
        cleanUntilDone(new LogCleaner(strict, STRICT, () -> 0.5));
        double strictMoved = strict.logMetrics().cleanerBytesMoved.count();
        double strictEnd = strict.utilisation();
        ref = strictRef;
        verifyAll(strict);
        strict.close();

        store = logWithOverwrites(dir.resolve("lazy"), 7, 300);
        assertEquals(start, store.utilisation(), 1e-9, "the same log");
        cleanUntilDone(new LogCleaner(store, LAZY, () -> 0.5));
        System.out.printf("cleaning a log %.2f live: to 0.85 moved %.0f bytes (ends %.2f), to 0.5 moved %.0f (ends %.2f)%n",
                start, strictMoved, strictEnd, moved(), store.utilisation());
        assertTrue(store.utilisation() >= 0.5, "the lazy target is still reached: " + store.utilisation());
        assertTrue(moved() < strictMoved, "lazy " + moved() + " strict " + strictMoved);
        verifyAll(store);
    }

    @Test
    void settingsRefuseATargetUnderPressureBelowTheLazyOne() {
        assertThrows(IllegalArgumentException.class, () -> new LogCleaner.Settings(0.6, 0.95, 0, 1.0, 16 * 1024, 5, 0.5, 0.1));
        assertThrows(IllegalArgumentException.class, () -> new LogCleaner.Settings(0.5, 0.95, 0, 1.0, 16 * 1024, 5, 0.85, 1.0));
        assertThrows(IllegalArgumentException.class, () -> LogCleaner.Settings.DEFAULTS.withTarget(0));
        LogCleaner.Settings high = LogCleaner.Settings.DEFAULTS.withTarget(0.9);
        assertEquals(0.9, high.targetUtilisation());
        assertEquals(0.9, high.pressureUtilisation(), "the pressure target never sits below the lazy one");
        assertEquals(0.85, LogCleaner.Settings.DEFAULTS.withTarget(0.3).pressureUtilisation());
    }
}
