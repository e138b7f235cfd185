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
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The index keeps RocksDB's memtable small ({@link ExtentIndex#MEMTABLE_BYTES}), so a random-write
 * load flushes it to level-0 files and compacts them many times an hour. Every block must still
 * read from its newest record, also after a reopen with a cache that holds two chunks of the 16.
 * Real RocksDB.
 */
class ExtentIndexFlushTest {
    private static final int CHUNKS = 16;
    /** Writes land on even blocks only, so no record ever extends its neighbour's run: one extent per write. */
    private static final int SLOTS = 8192;

    @TempDir
    Path dir;

    @Test
    void everyBlockReadsItsNewestRecordAcrossFlushesCompactionsAndReopen() throws Exception {
        Map<Long, ExtentIndex.IndexedWrite> newest = new TreeMap<>(); // chunk by chunk when checked
        Random r = new Random(42);
        long segment = 1;
        long pos = 0;
        long sequence = 0;
        LogPosition checkpoint = null;
        try (ExtentIndex index = ExtentIndex.open(dir)) {
            for (int batchNo = 0; batchNo < 16_000; batchNo++) {
                List<ExtentIndex.IndexedWrite> batch = new ArrayList<>();
                for (int i = 0; i < 16; i++) {
                    int c = r.nextInt(CHUNKS);
                    long offset = 8192L * r.nextInt(SLOTS);
                    ExtentIndex.IndexedWrite w = new ExtentIndex.IndexedWrite(new ChunkId(3, c), offset, 4096, ++sequence,
                            segment, pos);
                    batch.add(w);
                    newest.put(c * (long) SLOTS * 8192 + offset, w);
                    pos += LogRecord.HEADER + 4096;
                }
                checkpoint = new LogPosition(segment, pos);
                index.apply(batch, checkpoint);
                if (batchNo % 1000 == 999) {
                    segment++;
                    pos = 0;
                }
            }
            // 256 000 records over 131 072 keys: ~16 MiB of memtable inserts, several times MEMTABLE_BYTES.
            assertTrue(index.flushedBytes() > 0, "the memtable never flushed: is MEMTABLE_BYTES applied?");
        }
        try (ExtentIndex index = ExtentIndex.open(dir, 2 * SLOTS)) {
            assertEquals(checkpoint, index.checkpoint());
            Map<Long, Long> live = new HashMap<>();
            for (Map.Entry<Long, ExtentIndex.IndexedWrite> e : newest.entrySet()) {
                ExtentIndex.IndexedWrite w = e.getValue();
                List<Extent> found = index.find(w.chunk(), w.offset(), w.offset() + 4096);
                assertEquals(1, found.size(), "extents at " + w);
                Extent x = found.get(0);
                assertEquals(w.offset(), x.chunkOffset());
                assertEquals(4096, x.length());
                assertEquals(w.sequence(), x.sequence(), "sequence at " + w);
                assertEquals(w.segment(), x.segment());
                assertEquals(w.recordPosition(), x.recordPosition());
                live.merge(w.segment(), 4096L, Long::sum);
            }
            assertEquals(newest.size(), ExtentIndexBatchTest.all(index).size());
            assertEquals(live, index.liveBytesBySegment());
        }
    }
}
