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
 * {@link ExtentIndex#apply} reads the extents a batch has already changed: a batch of overlapping, adjacent (mergeable), trimmed and moved records
 * must leave exactly the index, and the live-byte deltas, that applying the same records one
 * batch each leaves. Real RocksDB.
 */
class ExtentIndexBatchTest {
    @TempDir
    Path dir;

    /** Records as a group commit of a random-write load would produce them, in log order. */
    static List<ExtentIndex.IndexedWrite> records(long seed, int n) {
        Random r = new Random(seed);
        ChunkId[] chunks = {new ChunkId(1, 0), new ChunkId(1, 1), new ChunkId(2, 7)};
        List<ExtentIndex.IndexedWrite> out = new ArrayList<>();
        long pos = 0;
        long segment = 1;
        long[] next = new long[chunks.length];
        for (int i = 0; i < n; i++) {
            int c = r.nextInt(chunks.length);
            int length = 4096 * (1 + r.nextInt(4));
            long offset;
            int kind = r.nextInt(10);
            if (kind < 4) {
                offset = next[c]; // sequential after this chunk's last write: its run may be extended
            } else {
                offset = 4096L * r.nextInt(64); // random: overlaps, splits, covers earlier extents
            }
            next[c] = offset + length;
            int recordBytes = LogRecord.HEADER + length;
            if (kind == 9) {
                out.add(new ExtentIndex.IndexedWrite(chunks[c], offset, length, i + 1, segment, pos, LogRecord.HEADER, -1, -1,
                        true));
                pos += LogRecord.HEADER;
                continue;
            }
            if (kind == 8 && !out.isEmpty()) {
                // A moved record (cleaner) of an earlier record's bytes: indexed where the origin still holds them.
                ExtentIndex.IndexedWrite origin = out.get(r.nextInt(out.size()));
                if (!origin.trim()) {
                    out.add(new ExtentIndex.IndexedWrite(origin.chunk(), origin.offset(), origin.length(), origin.sequence(),
                            segment, pos, LogRecord.HEADER + origin.length(), origin.segment(), origin.recordPosition()));
                    pos += LogRecord.HEADER + origin.length();
                    continue;
                }
            }
            out.add(new ExtentIndex.IndexedWrite(chunks[c], offset, length, i + 1, segment, pos, recordBytes, -1, -1));
            pos += recordBytes;
            if (r.nextInt(50) == 0) {
                segment++;
                pos = 0;
            }
        }
        return out;
    }

    static List<ExtentIndex.Entry> all(ExtentIndex index) throws Exception {
        List<ExtentIndex.Entry> out = new ArrayList<>();
        ExtentIndex.Entry after = null;
        while (true) {
            List<ExtentIndex.Entry> page = index.scan(after, 1000);
            if (page.isEmpty()) {
                return out;
            }
            out.addAll(page);
            after = page.get(page.size() - 1);
        }
    }

    private static void add(Map<Long, Long> into, Map<Long, Long> delta) {
        delta.forEach((k, v) -> into.merge(k, v, Long::sum));
        into.values().removeIf(v -> v == 0);
    }

    @Test
    void aWholeBatchIndexesLikeOneRecordPerBatch() throws Exception {
        for (long seed = 1; seed <= 5; seed++) {
            List<ExtentIndex.IndexedWrite> recs = records(seed, 600);
            Map<Long, Long> oneByOne = new HashMap<>();
            Map<Long, Long> batched = new HashMap<>();
            List<ExtentIndex.Entry> expected;
            List<ExtentIndex.Entry> actual;
            try (ExtentIndex index = ExtentIndex.open(dir.resolve("single-" + seed))) {
                for (ExtentIndex.IndexedWrite w : recs) {
                    add(oneByOne, index.apply(List.of(w), new LogPosition(w.segment(), w.recordPosition())));
                }
                expected = all(index);
            }
            try (ExtentIndex index = ExtentIndex.open(dir.resolve("batched-" + seed))) {
                // Batches of the sizes a group commit sees, the first one already in the base.
                int at = 0;
                int[] sizes = {7, 1, 32, 100, 460};
                for (int size : sizes) {
                    List<ExtentIndex.IndexedWrite> batch = recs.subList(at, Math.min(recs.size(), at + size));
                    add(batched, index.apply(batch, new LogPosition(1, at)));
                    at += batch.size();
                }
                assertEquals(recs.size(), at);
                actual = all(index);
            }
            assertTrue(expected.size() > 20, "the load leaves a fragmented index: " + expected.size());
            assertEquals(expected, actual, "seed " + seed);
            assertEquals(oneByOne, batched, "live-byte deltas, seed " + seed);
        }
    }
}
