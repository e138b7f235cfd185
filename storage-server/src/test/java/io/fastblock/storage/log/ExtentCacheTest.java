package io.fastblock.storage.log;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChunkId;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ExtentIndex} answers lookups from {@link ExtentCache}: what it answers must always be what
 * RocksDB holds (compared with a scan of RocksDB after every batch), whether a chunk stayed cached,
 * was dropped and read back, or was never kept. Real RocksDB.
 */
class ExtentCacheTest {
    private static final ChunkId[] CHUNKS = {new ChunkId(1, 0), new ChunkId(1, 1), new ChunkId(2, 7)};

    @TempDir
    Path dir;

    private static List<Extent> scanned(List<ExtentIndex.Entry> all, ChunkId chunk) {
        List<Extent> out = new ArrayList<>();
        for (ExtentIndex.Entry e : all) {
            if (e.chunk().equals(chunk)) {
                out.add(e.extent());
            }
        }
        return out;
    }

    @Test
    void lookupsAlwaysShowWhatRocksDbHolds() throws Exception {
        for (long seed = 1; seed <= 4; seed++) {
            List<ExtentIndex.IndexedWrite> recs = ExtentIndexBatchTest.records(seed, 800);
            Random sizes = new Random(seed);
            // 0: nothing stays cached between batches, every batch reads its chunks back from RocksDB;
            // 40: a chunk or two stay; default: everything stays.
            try (ExtentIndex none = ExtentIndex.open(dir.resolve("none-" + seed), 0);
                 ExtentIndex some = ExtentIndex.open(dir.resolve("some-" + seed), 40);
                 ExtentIndex all = ExtentIndex.open(dir.resolve("all-" + seed))) {
                int at = 0;
                int batches = 0;
                while (at < recs.size()) {
                    List<ExtentIndex.IndexedWrite> batch = recs.subList(at, Math.min(recs.size(), at + 1 + sizes.nextInt(40)));
                    LogPosition cp = new LogPosition(1, at);
                    Map<Long, Long> d0 = none.apply(batch, cp);
                    Map<Long, Long> d1 = some.apply(batch, cp);
                    Map<Long, Long> d2 = all.apply(batch, cp);
                    assertEquals(d2, d0, "live-byte deltas without a cache, seed " + seed + " batch " + batches);
                    assertEquals(d2, d1, "live-byte deltas with a small cache, seed " + seed + " batch " + batches);
                    assertTrue(some.cachedExtents() <= 40, "the small cache stays within its bound: " + some.cachedExtents());
                    assertEquals(0, none.cachedExtents());
                    List<ExtentIndex.Entry> inRocks = ExtentIndexBatchTest.all(all);
                    for (ChunkId chunk : CHUNKS) {
                        List<Extent> expected = scanned(inRocks, chunk);
                        assertEquals(expected, all.find(chunk, 0, Long.MAX_VALUE / 2), "cached " + chunk + " seed " + seed);
                        assertEquals(expected, some.find(chunk, 0, Long.MAX_VALUE / 2), "small cache " + chunk);
                        assertEquals(expected, none.find(chunk, 0, Long.MAX_VALUE / 2), "read back " + chunk);
                    }
                    assertEquals(inRocks, ExtentIndexBatchTest.all(none));
                    at += batch.size();
                    batches++;
                }
                assertTrue(all.cachedExtents() > 40, "the load fragments the chunks: " + all.cachedExtents());
            }
        }
    }

    @Test
    void rangeLookupsMatchAReopenedIndex() throws Exception {
        List<ExtentIndex.IndexedWrite> recs = ExtentIndexBatchTest.records(9, 500);
        Map<ChunkId, Map<Long, List<Extent>>> before = new HashMap<>();
        Random r = new Random(9);
        long[] starts = new long[30];
        for (int i = 0; i < starts.length; i++) {
            starts[i] = r.nextInt(64 * 4096 + 8192);
        }
        try (ExtentIndex index = ExtentIndex.open(dir.resolve("idx"))) {
            index.apply(recs, new LogPosition(1, 0));
            for (ChunkId chunk : CHUNKS) {
                for (long s : starts) {
                    before.computeIfAbsent(chunk, c -> new HashMap<>()).put(s, index.find(chunk, s, s + 5000));
                }
            }
        }
        try (ExtentIndex reopened = ExtentIndex.open(dir.resolve("idx"))) {
            assertEquals(0, reopened.cachedExtents());
            for (ChunkId chunk : CHUNKS) {
                for (long s : starts) {
                    assertEquals(before.get(chunk).get(s), reopened.find(chunk, s, s + 5000), chunk + " at " + s);
                }
            }
        }
    }

    @Test
    void anOverwriteOfTheSameBlocksPutsNoTombstone() throws Exception {
        ChunkId chunk = new ChunkId(3, 0);
        try (ExtentIndex index = ExtentIndex.open(dir.resolve("idx"))) {
            long pos = 0;
            for (int i = 0; i < 50; i++) {
                index.apply(List.of(new ExtentIndex.IndexedWrite(chunk, 0, 4096, i + 1, 1, pos)), new LogPosition(1, pos));
                pos += LogRecord.HEADER + 4096;
            }
            assertEquals(0, index.memtableDeletes(), "each overwrite replaced its key");
            assertEquals(1, index.find(chunk, 0, 4096).size());
            // Not adjacent in the log, so no run merge: two extents, then one write covering both.
            index.apply(List.of(new ExtentIndex.IndexedWrite(chunk, 4096, 4096, 100, 2, 0)), new LogPosition(2, 0));
            index.apply(List.of(new ExtentIndex.IndexedWrite(chunk, 0, 8192, 101, 3, 0)), new LogPosition(3, 0));
            assertEquals(1, index.memtableDeletes(), "the extent at 4096 is gone, its key deleted");
            List<Extent> left = index.find(chunk, 0, 1 << 20);
            assertEquals(1, left.size());
            assertEquals(new Extent(0, 3, 0, 0, 8192, 101, LogRecord.HEADER + 8192, 8192), left.get(0));
        }
        try (ExtentIndex reopened = ExtentIndex.open(dir.resolve("idx"))) {
            assertEquals(List.of(new Extent(0, 3, 0, 0, 8192, 101, LogRecord.HEADER + 8192, 8192)),
                    reopened.find(chunk, 0, 1 << 20));
        }
    }
}
