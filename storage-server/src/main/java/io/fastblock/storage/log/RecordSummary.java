package io.fastblock.storage.log;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;

/**
 * The headers of a segment's records as this process appended them, so that the cleaner can find
 * a segment's records without reading it. A {@link HeaderWalk} of a segment of 4 KiB records reads
 * the whole segment (headers and data lie together), so under small random overwrites the cleaner
 * read back about as many bytes as the log took in (408 MB during 400 MB of writes, measured), and
 * the walk was half of the cleaner thread's CPU. This is the segment summary of Rosenblum and
 * Ousterhout's LFS, kept in memory only: a segment written before a restart, or one whose summary
 * ran out of budget, is walked as before.
 *
 * <p>The summary is used only if its records tile the segment exactly, from position 0 to the
 * segment's size, so a summary that missed a record (it was given up, or the segment was cut back
 * after a failed append and the summary with it) is never taken for the segment's contents.
 */
final class RecordSummary {
    /** Memory is taken from the budget in blocks of this size. */
    static final int BLOCK = 64 << 10;
    /** Per record: its position (8 bytes), its header's size (1 byte), the header. */
    private static final int ENTRY_OVERHEAD = 9;

    /** One record: where it starts in the segment and its parsed header. */
    record Entry(long position, LogRecord.Header header) {
    }

    /** The log's memory for summaries, in blocks: one permit each. */
    private final Semaphore budget;
    private final List<byte[]> blocks = new ArrayList<>();
    /** Where the entries of each block but the last end. */
    private final List<Integer> ends = new ArrayList<>();
    /** Bytes used in the last block. */
    private int used = BLOCK;
    private int records;
    /** The budget ran out: the summary no longer covers the segment and is never used. */
    private boolean abandoned;

    /** A budget of {@code bytes} of summaries (whole blocks) for the segments of one log. */
    static Semaphore budget(long bytes) {
        return new Semaphore((int) Math.min(Integer.MAX_VALUE, bytes / BLOCK));
    }

    RecordSummary(Semaphore budget) {
        this.budget = budget;
    }

    /** Notes the record at {@code position} whose header is {@code header}'s bytes from index 0 to its limit. */
    synchronized void add(long position, ByteBuffer header) {
        if (abandoned) {
            return;
        }
        int length = header.limit();
        if (length > 255 || length < LogRecord.HEADER) {
            abandon();
            return;
        }
        if (used + ENTRY_OVERHEAD + length > BLOCK) {
            if (!budget.tryAcquire()) {
                abandon();
                return;
            }
            if (!blocks.isEmpty()) {
                ends.add(used);
            }
            blocks.add(new byte[BLOCK]);
            used = 0;
        }
        ByteBuffer.wrap(blocks.get(blocks.size() - 1), used, ENTRY_OVERHEAD + length)
                .putLong(position).put((byte) length).put(header.duplicate().position(0));
        used += ENTRY_OVERHEAD + length;
        records++;
    }

    /** Forgets the records at or after {@code position} (the segment was cut back there). */
    synchronized void cutBack(long position) {
        if (abandoned) {
            return;
        }
        int[] kept = {0};
        scan((bi, at, pos, length) -> {
            if (pos < position) {
                kept[0]++;
                return true;
            }
            // Records are noted in position order: this one and all after it go.
            while (blocks.size() > bi + 1) {
                blocks.remove(blocks.size() - 1);
                budget.release();
            }
            while (ends.size() > bi) {
                ends.remove(ends.size() - 1);
            }
            used = at;
            records = kept[0];
            return false;
        });
    }

    /**
     * The records, in position order, if they tile {@code [0, size)} exactly; null otherwise (the
     * segment must then be walked).
     */
    synchronized List<Entry> entries(long size) {
        if (abandoned) {
            return null;
        }
        List<Entry> all = parse();
        long next = 0;
        for (Entry e : all) {
            if (e.position() != next) {
                return null;
            }
            next += e.header().size();
        }
        return next == size ? all : null;
    }

    /** Gives the summary's memory back; it is abandoned from now on. */
    synchronized void release() {
        abandon();
    }

    /** Bytes of budget held. */
    synchronized long bytes() {
        return (long) blocks.size() * BLOCK;
    }

    private List<Entry> parse() {
        List<Entry> out = new ArrayList<>(records);
        scan((bi, at, position, length) -> {
            LogRecord.Header h = LogRecord.parse(ByteBuffer.wrap(blocks.get(bi), at + ENTRY_OVERHEAD, length).slice());
            if (h == null) {
                throw new IllegalStateException("record summary holds an unparsable header at position " + position);
            }
            out.add(new Entry(position, h));
            return true;
        });
        return out;
    }

    private interface EntryVisitor {
        /** Entry of a record at {@code position}, {@code at} bytes into block {@code bi}; false stops the scan. */
        boolean entry(int bi, int at, long position, int headerLength);
    }

    /** Visits the entries in order until the visitor says stop. */
    private void scan(EntryVisitor visitor) {
        for (int bi = 0; bi < blocks.size(); bi++) {
            byte[] block = blocks.get(bi);
            int end = end(bi);
            int at = 0;
            while (at < end) {
                ByteBuffer b = ByteBuffer.wrap(block, at, ENTRY_OVERHEAD);
                long position = b.getLong();
                int length = b.get() & 0xff;
                if (!visitor.entry(bi, at, position, length)) {
                    return;
                }
                at += ENTRY_OVERHEAD + length;
            }
        }
    }

    /** Where the entries of block {@code bi} end: every block but the last is closed when the next entry does not fit. */
    private int end(int bi) {
        return bi == blocks.size() - 1 ? used : ends.get(bi);
    }

    private void abandon() {
        abandoned = true;
        budget.release(blocks.size());
        blocks.clear();
        ends.clear();
        used = BLOCK;
        records = 0;
    }
}
