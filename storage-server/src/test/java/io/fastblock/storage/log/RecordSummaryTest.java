package io.fastblock.storage.log;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChunkId;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import org.junit.jupiter.api.Test;

/**
 * A segment's record summary gives back exactly the headers noted, in order, and only while they
 * tile the segment; memory comes from and goes back to the log's budget.
 */
class RecordSummaryTest {
    private static final long SEGMENT = 9;
    private static final ChunkId CHUNK = new ChunkId(3, 7);

    /** Notes {@code count} records of every kind (data, moved, trim) and returns the segment's size. */
    private static long fill(RecordSummary s, int count, List<ByteBuffer> headers) {
        long pos = 0;
        for (int i = 0; i < count; i++) {
            ByteBuffer[] data = {ByteBuffer.allocate(512 * (1 + i % 8))};
            ByteBuffer h = switch (i % 3) {
                case 0 -> LogRecord.header(SEGMENT, CHUNK, 4096L * i, i + 1, data);
                case 1 -> LogRecord.header(SEGMENT, CHUNK, 4096L * i, i + 1, 4, 8192L * i, data);
                default -> LogRecord.trimHeader(SEGMENT, CHUNK, 4096L * i, i + 1, 4096 * (1 + i % 4));
            };
            s.add(pos, h);
            headers.add(h);
            pos += h.limit() + (i % 3 == 2 ? 0 : data[0].remaining());
        }
        return pos;
    }

    private static long left(Semaphore budget) {
        return (long) budget.availablePermits() * RecordSummary.BLOCK;
    }

    @Test
    void givesBackEveryHeaderInOrderAcrossBlocks() {
        Semaphore budget = RecordSummary.budget(64L << 20);
        RecordSummary s = new RecordSummary(budget);
        List<ByteBuffer> headers = new ArrayList<>();
        long size = fill(s, 5000, headers); // ~300 KB of entries: several blocks
        List<RecordSummary.Entry> entries = s.entries(size);
        assertNotNull(entries);
        assertEquals(5000, entries.size());
        long pos = 0;
        for (int i = 0; i < entries.size(); i++) {
            RecordSummary.Entry e = entries.get(i);
            assertEquals(pos, e.position(), "record " + i);
            assertEquals(LogRecord.parse(headers.get(i).duplicate()), e.header(), "record " + i);
            pos += e.header().size();
        }
        assertTrue(s.bytes() > RecordSummary.BLOCK, "spans blocks: " + s.bytes());
        assertEquals((64L << 20) - s.bytes(), left(budget));
    }

    @Test
    void isNotUsedUnlessItTilesTheSegment() {
        RecordSummary s = new RecordSummary(RecordSummary.budget(1 << 20));
        long size = fill(s, 10, new ArrayList<>());
        assertNotNull(s.entries(size));
        assertNull(s.entries(size + 1), "bytes past the last noted record");
        assertNull(s.entries(size - 1), "a segment shorter than its records");
        RecordSummary gap = new RecordSummary(RecordSummary.budget(1 << 20));
        ByteBuffer[] data = {ByteBuffer.allocate(4096)};
        gap.add(0, LogRecord.header(SEGMENT, CHUNK, 0, 1, data));
        gap.add(2 * (LogRecord.HEADER + 4096), LogRecord.header(SEGMENT, CHUNK, 8192, 3, data)); // one record missing
        assertNull(gap.entries(3 * (LogRecord.HEADER + 4096)));
        RecordSummary late = new RecordSummary(RecordSummary.budget(1 << 20));
        late.add(LogRecord.HEADER + 4096, LogRecord.header(SEGMENT, CHUNK, 4096, 2, data)); // started after the first record
        assertNull(late.entries(2 * (LogRecord.HEADER + 4096)));
    }

    @Test
    void aCutDropsTheRecordsFromThereOnAndGivesTheirMemoryBack() {
        Semaphore budget = RecordSummary.budget(64L << 20);
        RecordSummary s = new RecordSummary(budget);
        List<ByteBuffer> headers = new ArrayList<>();
        fill(s, 5000, headers);
        long held = s.bytes();
        long cut = 0;
        for (int i = 0; i < 100; i++) {
            cut += LogRecord.parse(headers.get(i).duplicate()).size();
        }
        s.cutBack(cut);
        List<RecordSummary.Entry> kept = s.entries(cut);
        assertNotNull(kept);
        assertEquals(100, kept.size());
        assertTrue(s.bytes() < held, "blocks given back: " + s.bytes() + " of " + held);
        assertEquals((64L << 20) - s.bytes(), left(budget));
        // Appends go on after the cut as before.
        ByteBuffer next = LogRecord.header(SEGMENT, CHUNK, 0, 99_999, new ByteBuffer[] {ByteBuffer.allocate(4096)});
        s.add(cut, next);
        assertEquals(101, s.entries(cut + next.limit() + 4096).size());
    }

    @Test
    void runningOutOfBudgetGivesTheSummaryUpAndItsMemoryBack() {
        Semaphore budget = RecordSummary.budget(RecordSummary.BLOCK);
        RecordSummary s = new RecordSummary(budget);
        long size = fill(s, 500, new ArrayList<>()); // one block holds about a thousand; fine
        assertNotNull(s.entries(size));
        assertEquals(0, left(budget));
        long more = fill(s, 3000, new ArrayList<>()); // needs a second block: refused
        assertNull(s.entries(size), "a summary missing records is never used");
        assertNull(s.entries(more));
        assertEquals(RecordSummary.BLOCK, left(budget));
        RecordSummary other = new RecordSummary(budget);
        other.add(0, LogRecord.header(SEGMENT, CHUNK, 0, 1, new ByteBuffer[] {ByteBuffer.allocate(4096)}));
        assertNotNull(other.entries(LogRecord.HEADER + 4096), "the memory went back to the budget");
        other.release();
        assertEquals(RecordSummary.BLOCK, left(budget));
        assertNull(other.entries(LogRecord.HEADER + 4096));
    }
}
