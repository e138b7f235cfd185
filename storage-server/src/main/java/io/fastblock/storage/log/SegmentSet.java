package io.fastblock.storage.log;

import java.io.Closeable;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

/**
 * The log's segment files, oldest first; the last one is the one appended to.
 *
 * <p>A retired segment's file is kept for reuse ({@code <number>.free}, at most {@link #KEEP_FREE}
 * of them, while {@code roomToKeep} says the disk can spare them) and becomes the next segment
 * when the log rolls on. Why: a new file's first fdatasyncs also write its block allocation, which
 * the {@link LogPreallocator} avoids by writing and forcing zeros ahead of the records, doubling
 * the log's disk writes under small commits; and deleting a 64 MiB file frees (on a filesystem
 * mounted with {@code discard}, discards) its blocks in the journal commit that fsyncs wait for.
 * A reused file has its blocks: records overwrite them and only the data is forced. Only files
 * holding bound records only ({@link LogRecord}) are reused, so replay can tell its records from
 * the file's earlier ones.
 */
final class SegmentSet implements Closeable {
    /** Retired files kept for reuse; the cleaner retires about as fast as the log rolls, so two cover a burst. */
    static final int KEEP_FREE = 2;
    /**
     * Memory for the segments' record summaries ({@link RecordSummary}): at about 55 bytes per
     * record, 16 MiB covers about 1.2 GiB of 4 KiB records (a record of 1 MiB costs the same 55
     * bytes). Segments beyond it are walked when cleaned.
     */
    static final long SUMMARY_BUDGET = 16L << 20;
    private final Semaphore summaries = RecordSummary.budget(SUMMARY_BUDGET);
    private final Path dir;
    private final long segmentSize;
    private final ConcurrentSkipListMap<Long, LogSegment> segments = new ConcurrentSkipListMap<>();
    /** Files ready for reuse, by the number of the segment they held. */
    private final ConcurrentSkipListMap<Long, Path> free = new ConcurrentSkipListMap<>();
    /** Files renamed for reuse or still waiting for their last reader. */
    private final AtomicInteger freeOrPending = new AtomicInteger();
    private final BooleanSupplier roomToKeep;
    private long reused;

    private final io.fastblock.storage.io.FileIoFactory files;

    SegmentSet(Path dir, long segmentSize) throws IOException {
        this(dir, segmentSize, io.fastblock.storage.io.FileIoFactory.real());
    }

    SegmentSet(Path dir, long segmentSize, io.fastblock.storage.io.FileIoFactory files) throws IOException {
        this(dir, segmentSize, files, () -> true);
    }

    SegmentSet(Path dir, long segmentSize, io.fastblock.storage.io.FileIoFactory files,
               BooleanSupplier roomToKeep) throws IOException {
        this.dir = dir;
        this.segmentSize = segmentSize;
        this.files = files;
        this.roomToKeep = roomToKeep;
        Files.createDirectories(dir);
        List<Long> numbers = new ArrayList<>();
        List<Long> freeNumbers = new ArrayList<>();
        try (Stream<Path> listed = Files.list(dir)) {
            listed.map(p -> p.getFileName().toString()).forEach(n -> {
                if (n.matches("\\d+\\.seg")) {
                    numbers.add(Long.parseLong(n.substring(0, n.length() - 4)));
                } else if (n.matches("\\d+\\.free")) {
                    freeNumbers.add(Long.parseLong(n.substring(0, n.length() - 5)));
                }
            });
        }
        for (long n : freeNumbers) {
            if (free.size() < KEEP_FREE) {
                free.put(n, freePath(n));
                freeOrPending.incrementAndGet();
            } else {
                files.delete(freePath(n));
            }
        }
        for (long n : numbers) {
            segments.put(n, LogSegment.open(dir, n, files));
        }
        if (segments.isEmpty()) {
            LogSegment first = LogSegment.open(dir, 1, files);
            first.startSummary(summaries);
            segments.put(1L, first);
            syncDir();
        }
    }

    List<LogSegment> all() {
        return new ArrayList<>(segments.values());
    }

    LogSegment get(long number) {
        return segments.get(number);
    }

    /** The segment with a reader's reference taken (release it after reading), or null if it is gone. */
    LogSegment acquire(long number) {
        LogSegment s = segments.get(number);
        return s != null && s.retain() ? s : null;
    }

    /**
     * Removes a segment the index no longer reads from; its file goes when the last reader lets go:
     * kept for reuse when it may be and there is room, else deleted.
     */
    void retire(long number) throws IOException {
        LogSegment s = segments.remove(number);
        if (s == null) {
            return;
        }
        if (s.reusable() && freeOrPending.incrementAndGet() <= KEEP_FREE && roomToKeep.getAsBoolean()) {
            Path to = freePath(number);
            s.retireForReuse(to, () -> free.put(number, to));
        } else {
            if (s.reusable()) {
                freeOrPending.decrementAndGet();
            }
            s.retire();
        }
        syncDir();
    }

    private Path freePath(long number) {
        return dir.resolve(String.format("%012d.free", number));
    }

    /** Files kept for reuse now. */
    int freeFiles() {
        return free.size();
    }

    /** Segments started on a reused file since the set was opened. */
    synchronized long reusedFiles() {
        return reused;
    }

    /** Bytes of all segment files. */
    long totalBytes() {
        long sum = 0;
        for (LogSegment s : segments.values()) {
            sum += s.size();
        }
        return sum;
    }

    Path dir() {
        return dir;
    }

    /** Summary memory not yet taken, in bytes; for tests. */
    long summaryBudgetLeft() {
        return (long) summaries.availablePermits() * RecordSummary.BLOCK;
    }

    LogSegment active() {
        return segments.lastEntry().getValue();
    }

    /** The segment to append a record of {@code recordBytes} to, rolling over when the active one is full. */
    LogSegment forAppend(long recordBytes) throws IOException {
        LogSegment active = active();
        if (active.size() > 0 && active.size() + recordBytes > segmentSize) {
            active.seal();
            LogSegment next = next(active.number() + 1);
            next.startSummary(summaries);
            segments.put(next.number(), next);
            syncDir();
            return next;
        }
        return active;
    }

    /** Segment {@code number} on a kept file if there is one, else on a new file. */
    private LogSegment next(long number) throws IOException {
        Map.Entry<Long, Path> kept = free.pollFirstEntry();
        if (kept == null) {
            return LogSegment.open(dir, number, files);
        }
        freeOrPending.decrementAndGet();
        files.rename(kept.getValue(), LogSegment.pathOf(dir, number));
        synchronized (this) {
            reused++;
        }
        return LogSegment.reuse(dir, number, files);
    }

    /** Removes every segment after {@code number} (replay found the log ends before them). */
    void dropAfter(long number) throws IOException {
        for (LogSegment s : new ArrayList<>(segments.tailMap(number, false).values())) {
            segments.remove(s.number());
            s.close();
            files.delete(s.path());
        }
        syncDir();
    }

    private void syncDir() throws IOException {
        // A new segment's name must be durable too, or an fsynced record can vanish with its file.
        files.syncDirectory(dir);
    }

    @Override
    public void close() throws IOException {
        for (LogSegment s : segments.values()) {
            s.close();
        }
    }
}
