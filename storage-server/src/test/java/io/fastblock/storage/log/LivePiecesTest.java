package io.fastblock.storage.log;

import static io.fastblock.storage.log.LogFixture.bytes;
import static io.fastblock.storage.log.LogFixture.read;
import static io.fastblock.storage.log.LogFixture.write;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.StorageMetrics;
import io.netty.buffer.ByteBuf;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cleaner's view of a sealed segment ({@link LogStore#livePieces}, one index lookup per chunk):
 * after overwrites, sequential runs and trims of several chunks, each segment's pieces add up to
 * exactly the live bytes the index accounts to it, never overlap, and hold the chunk's current data.
 */
class LivePiecesTest {
    private static final int K = 4096;

    @TempDir
    Path dir;

    @Test
    void piecesAreExactlyTheLiveBytesOfEachSegment() throws Exception {
        ChunkId[] chunks = {new ChunkId(5, 0), new ChunkId(5, 1), new ChunkId(6, 3)};
        Random r = new Random(11);
        try (LogStore store = LogStore.open(dir, 1 << 20, new StorageMetrics())) {
            for (int i = 0; i < 1500; i++) {
                ChunkId c = chunks[r.nextInt(chunks.length)];
                long off = (long) K * r.nextInt(256);
                if (r.nextInt(20) == 0) {
                    store.trim(c, off, i + 1, K * (1 + r.nextInt(8))).get(30, TimeUnit.SECONDS);
                } else {
                    write(store, c, off, bytes(K * (1 + r.nextInt(4)), i));
                }
            }
            List<LogSegment> sealed = store.sealedSegments();
            assertTrue(sealed.size() >= 3, "several sealed segments: " + sealed.size());
            for (LogSegment s : sealed) {
                List<LogStore.LivePiece> pieces = store.livePieces(s.number(), 64 * K);
                long sum = 0;
                Map<ChunkId, TreeMap<Long, Long>> seen = new HashMap<>();
                for (LogStore.LivePiece p : pieces) {
                    sum += p.end() - p.start();
                    assertEquals(s.number(), p.extent().segment());
                    TreeMap<Long, Long> ranges = seen.computeIfAbsent(p.chunk(), x -> new TreeMap<>());
                    Map.Entry<Long, Long> before = ranges.floorEntry(p.end() - 1);
                    assertTrue(before == null || before.getValue() <= p.start(), "pieces overlap in " + p.chunk());
                    ranges.put(p.start(), p.end());
                    assertHoldsCurrentBytes(store, p, LoadedRuns.forOneRead());
                }
                assertEquals(store.liveBytes().of(s.number()), sum, "segment " + s.number());
            }
        }
    }
    /**
     * The cleaner finds a segment's records in its summary while the segment was written by this
     * process, and by walking the segment after a restart: both give the same pieces. Moved records
     * (a cleaner pass in between) and trims are among them.
     */
    @Test
    void theSummaryFindsTheSamePiecesAsAWalkOfTheSegment() throws Exception {
        ChunkId[] chunks = {new ChunkId(5, 0), new ChunkId(5, 1), new ChunkId(6, 3)};
        Random r = new Random(17);
        Map<Long, List<LogStore.LivePiece>> fromSummaries = new TreeMap<>();
        try (LogStore store = LogStore.open(dir, 1 << 20, new StorageMetrics())) {
            for (int round = 0; round < 2; round++) {
                for (int i = 0; i < 800; i++) {
                    ChunkId c = chunks[r.nextInt(chunks.length)];
                    long off = (long) K * r.nextInt(256);
                    if (r.nextInt(20) == 0) {
                        store.trim(c, off, round * 1000 + i + 1, K * (1 + r.nextInt(8))).get(30, TimeUnit.SECONDS);
                    } else {
                        write(store, c, off, bytes(K * (1 + r.nextInt(4)), round * 1000 + i));
                    }
                }
                if (round == 0) {
                    LogFixture.cleanUntilDone(new LogCleaner(store, new LogCleaner.Settings(0.85, 0.95, 0, 1.0, 16 * 1024, 5)));
                    assertTrue(store.logMetrics().cleanerBytesMoved.count() > 0, "the cleaner moved records");
                }
            }
            for (LogSegment s : store.sealedSegments()) {
                fromSummaries.put(s.number(), store.livePieces(s.number(), 64 * K));
            }
            assertTrue(fromSummaries.size() >= 3, "several sealed segments: " + fromSummaries.keySet());
            assertEquals(0, store.logMetrics().cleanerWalkBytes.count(), "no segment of this process was walked");
            long[] memory = store.summaryMemory();
            assertTrue(memory[0] > 0, "the segments hold summaries");
            assertEquals(SegmentSet.SUMMARY_BUDGET, memory[0] + memory[1], "the cleaned segments gave their summaries back");
        }
        try (LogStore store = LogStore.open(dir, 1 << 20, new StorageMetrics())) {
            int compared = 0;
            for (LogSegment s : store.sealedSegments()) {
                List<LogStore.LivePiece> expected = fromSummaries.get(s.number());
                if (expected != null) {
                    assertEquals(expected, store.livePieces(s.number(), 64 * K), "segment " + s.number());
                    compared++;
                }
            }
            assertTrue(compared >= 3, "compared " + compared);
            assertTrue(store.logMetrics().cleanerWalkBytes.count() > 0, "segments opened from disk are walked");
        }
    }

    /**
     * Large records cut into many live pieces by small overwrites (a prefilled volume under 4 KiB
     * random writes): read in segment order through one {@link LoadedRuns}, as the cleaner does,
     * every piece still holds the chunk's current bytes, and each run is read from the log once
     * rather than once per piece.
     */
    @Test
    void piecesOfOneRunAreReadFromTheLogOnce() throws Exception {
        ChunkId c = new ChunkId(7, 0);
        Random r = new Random(5);
        try (LogStore store = LogStore.open(dir, 1 << 20, new StorageMetrics())) {
            for (int i = 0; i < 16; i++) {
                write(store, c, (long) i * 64 * K, bytes(64 * K, i)); // 256 KiB records, sequential: merged runs
            }
            for (int i = 0; i < 300; i++) {
                write(store, c, (long) K * r.nextInt(16 * 64), bytes(K, 100 + i));
            }
            long pieces = 0;
            long runsRead = 0;
            for (LogSegment s : store.sealedSegments()) {
                LoadedRuns runs = new LoadedRuns(2);
                java.util.Set<Long> runKeys = new java.util.HashSet<>();
                for (LogStore.LivePiece p : store.livePieces(s.number(), 64 * K)) {
                    pieces++;
                    runKeys.add(p.extent().recordPosition());
                    assertHoldsCurrentBytes(store, p, runs);
                }
                assertEquals(runKeys.size(), runs.loads(), "segment " + s.number() + ": one read per run");
                runsRead += runs.loads();
            }
            assertTrue(pieces > 2 * runsRead, "the overwrites cut runs into many pieces: " + pieces + " pieces, "
                    + runsRead + " runs");
        }
    }

    /** The piece read as the cleaner reads it (through {@code runs}) holds the chunk's current bytes. */
    private static void assertHoldsCurrentBytes(LogStore store, LogStore.LivePiece p, LoadedRuns runs) throws Exception {
        ByteBuf moved = store.readExtent(p.chunk(), p.extent(), p.start(), p.end(), runs);
        try {
            byte[] got = new byte[(int) (p.end() - p.start())];
            moved.getBytes(0, got);
            assertArrayEquals(read(store, p.chunk(), p.start(), got.length), got, "piece " + p);
        } finally {
            moved.release();
        }
    }
}
