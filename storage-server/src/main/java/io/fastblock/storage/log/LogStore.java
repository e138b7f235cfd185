package io.fastblock.storage.log;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.StorageMetrics;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tail's log-structured store: appends go to segment files shared by all chunks, made
 * durable by group commit and located through the {@link ExtentIndex}. Opening replays the
 * records after the index checkpoint and cuts the log at the first torn or corrupt record.
 *
 * <p>A read returns, for each byte, the log's newest data if the index has an extent for it,
 * else the chunk's base file ({@link BaseFiles}, the in-place chunk file), else zeros.
 * {@link #fold} moves a chunk's log data into its base file; {@link LogCleaner} reclaims
 * segments; {@link LogScrubber} verifies live records in the background.
 */
public final class LogStore implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(LogStore.class);
    private static final int REPLAY_BATCH = 1024;
    /** A read that races with the cleaner retries its index lookup this often before calling the index wrong. */
    private static final int READ_ATTEMPTS = 5;

    private final SegmentSet segments;
    private final ExtentIndex index;
    private final StorageMetrics metrics;
    private final LogMetrics logMetrics;
    private final LiveBytes liveBytes = new LiveBytes();
    private final LongAdder foregroundBytes = new LongAdder();
    private final BaseFiles base;
    private final DiskSpace space;
    private final GroupCommitter committer;
    private final ExecutorService readers;
    private final ExecutorService maintenance;
    /** Held by a fold for its whole run and by the cleaner per batch of moved records: a fold's compare-and-set then never misses bytes the cleaner moved meanwhile. */
    final ReentrantLock relocation = new ReentrantLock();
    private final RecoveryReport recovery;
    private final LogPreallocator preallocator;

    /** What opening found: records replayed into the index and bytes cut off a torn tail. */
    public record RecoveryReport(int replayedRecords, long truncatedBytes) {
    }

    /** The index pointed at a segment the cleaner has since retired: look the range up again. */
    private static final class SegmentGone extends IOException {
        private static final long serialVersionUID = 1L;

        SegmentGone(long segment) {
            super("segment " + segment + " is gone");
        }
    }

    private LogStore(Path dataDir, long segmentSize, StorageMetrics metrics, int readThreads, BaseFiles base,
                     long reservedSpace) throws IOException {
        this(dataDir, segmentSize, metrics, readThreads, base, reservedSpace, io.fastblock.storage.io.FileIoFactory.real());
    }

    private LogStore(Path dataDir, long segmentSize, StorageMetrics metrics, int readThreads, BaseFiles base,
                     long reservedSpace, io.fastblock.storage.io.FileIoFactory files) throws IOException {
        this.metrics = metrics;
        this.base = base;
        Path logDir = dataDir.resolve("log");
        Files.createDirectories(logDir);
        this.space = new DiskSpace(files.space(logDir), reservedSpace);
        this.segments = new SegmentSet(logDir, segmentSize, files, () -> roomToKeepFreeFiles(segmentSize));
        ExtentIndex idx = ExtentIndex.open(dataDir.resolve("index"));
        this.index = idx;
        LogPosition cp;
        try {
            this.recovery = replay();
            // Rebuilt from the index on every open, so the accounting is right after any crash.
            liveBytes.seed(index.liveBytesBySegment());
            cp = index.checkpoint();
        } catch (IOException | RuntimeException e) {
            idx.close();
            segments.close();
            throw e;
        }
        this.preallocator = new LogPreallocator(segments, segmentSize);
        this.committer = new GroupCommitter(segments, index, metrics, liveBytes, space, cp == null ? 0 : cp.segment(),
                preallocator);
        AtomicInteger n = new AtomicInteger();
        this.readers = Executors.newFixedThreadPool(readThreads, r -> {
            Thread t = new Thread(r, "log-read-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        this.maintenance = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "log-fold");
            t.setDaemon(true);
            return t;
        });
        this.logMetrics = new LogMetrics(metrics.registry(), this);
    }

    /** A store without base files (missing bytes read as zeros) and without a space reserve. */
    public static LogStore open(Path dataDir, long segmentSize, StorageMetrics metrics) throws IOException {
        return new LogStore(dataDir, segmentSize, metrics, 2, BaseFiles.NONE, 0);
    }

    /**
     * A store reading missing bytes from {@code base} and refusing foreground appends that would
     * leave less than {@code reservedSpace} bytes free on the log's filesystem (0: only a real
     * ENOSPC refuses).
     */
    public static LogStore open(Path dataDir, long segmentSize, StorageMetrics metrics, BaseFiles base, long reservedSpace)
            throws IOException {
        return open(dataDir, segmentSize, metrics, base, reservedSpace, io.fastblock.storage.io.FileIoFactory.real());
    }

    /**
     * As above, with the segments opened through {@code files} (power-loss tests drop what the log
     * did not fsync). The RocksDB index cannot go through it; it never runs ahead of the log's
     * durable records (a batch is indexed only after its fsync) and replay rebuilds what it lacks.
     */
    public static LogStore open(Path dataDir, long segmentSize, StorageMetrics metrics, BaseFiles base, long reservedSpace,
                                io.fastblock.storage.io.FileIoFactory files) throws IOException {
        return new LogStore(dataDir, segmentSize, metrics, 2, base, reservedSpace, files);
    }

    public RecoveryReport recovery() {
        return recovery;
    }

    public LiveBytes liveBytes() {
        return liveBytes;
    }

    public StorageMetrics metrics() {
        return metrics;
    }

    public LogMetrics logMetrics() {
        return logMetrics;
    }

    /** Data bytes of every foreground write appended since the store opened (the cleaner's measure of load). */
    public long foregroundBytes() {
        return foregroundBytes.sum();
    }

    /** Bytes of all segment files. */
    public long diskBytes() {
        return segments.totalBytes();
    }

    /** Live data bytes / segment bytes on disk (1.0 for an empty log); the cleaner keeps this up. */
    public double utilisation() {
        long disk = diskBytes();
        return disk == 0 ? 1.0 : (double) liveBytes.total() / disk;
    }

    /** Usable / total bytes of the log's filesystem (what the cleaner calls space pressure is a low value). */
    public double freeSpaceRatio() throws IOException {
        return space.freeRatio();
    }

    /** Free bytes below which foreground appends fail with {@link NoSpaceException}. */
    public long reservedSpace() {
        return space.reserved();
    }

    public void reservedSpace(long bytes) {
        space.reserved(bytes);
    }

    /**
     * Appends a write; takes ownership of {@code data}. Completes after the record is fsynced and
     * indexed, or fails with {@link NoSpaceException} if the disk is full (nothing else is harmed).
     */
    public CompletableFuture<Void> append(ChunkId chunk, long offset, long sequence, ByteBuf data) {
        if (data.readableBytes() > LogRecord.MAX_DATA) {
            data.release();
            return CompletableFuture.failedFuture(new IllegalArgumentException("write of " + data.readableBytes()
                    + " bytes exceeds " + LogRecord.MAX_DATA));
        }
        foregroundBytes.add(data.readableBytes());
        CompletableFuture<Void> done = committer.append(chunk, offset, sequence, data);
        done.whenComplete((v, err) -> {
            if (err instanceof NoSpaceException) {
                logMetrics.noSpaceRejections.increment();
            }
        });
        return done;
    }

    /**
     * Appends a trim record of {@code [offset, offset + length)}: once it completes (fsynced and
     * indexed) the range reads as zeros from the log, older records and the base file no longer
     * show through it (an index hole, also after replay), and the records' bytes it covered are no
     * longer live, so the cleaner reclaims them.
     */
    public CompletableFuture<Void> trim(ChunkId chunk, long offset, long sequence, int length) {
        return committer.trim(chunk, offset, sequence, length);
    }

    /**
     * The allocated ranges of {@code [offset, offset + length)} as this log reads them, by whole
     * 4 KiB blocks like a chunk file's allocation: a block is allocated if any byte of it is log
     * data, or if the log does not cover all of it and the base file's block is allocated (holes
     * hide the base). Ranges are clipped to the asked range, so a query starting or ending inside
     * a block answers for that block as a whole: a resync copying from the middle of a partly
     * written block must not learn that the block is unallocated.
     */
    public io.fastblock.protocol.Extents extents(ChunkId chunk, long offset, long length) throws IOException {
        final int block = 4096;
        long end = offset + length;
        long from = offset / block * block;
        long to = (end + block - 1) / block * block;
        List<Extent> found = index.find(chunk, from, to);
        io.fastblock.protocol.Extents baseExtents = base.extents(chunk, from, to - from);
        io.fastblock.protocol.Extents.Builder out = new io.fastblock.protocol.Extents.Builder();
        int i = 0;
        for (long at = from; at < to; at += block) {
            long next = at + block;
            while (i < found.size() && found.get(i).end() <= at) {
                i++;
            }
            boolean data = false;
            boolean covered = true;
            long pos = at;
            for (int j = i; j < found.size() && found.get(j).chunkOffset() < next; j++) {
                Extent e = found.get(j);
                if (e.chunkOffset() > pos) {
                    covered = false;
                }
                pos = Math.max(pos, e.end());
                data |= !e.isHole();
            }
            if (pos < next) {
                covered = false;
            }
            if (data || (!covered && baseExtents.contains(at))) {
                long a = Math.max(at, offset);
                out.add(a, Math.min(next, end) - a);
            }
        }
        return out.build();
    }

    /**
     * The group's log horizon: this log holds every write of the group with a sequence above it
     * (recorded when the node takes the tail position, dropped when it leaves it and folds);
     * -1 if unknown. A delta "everything newer than s" can be answered from the index alone iff
     * {@code 0 <= horizon <= s}.
     */
    public long horizon(int groupId) throws IOException {
        return index.horizon(groupId);
    }

    /** Records the horizon unless one is recorded already (a restarted tail keeps its own). */
    public synchronized void horizonIfAbsent(int groupId, long sequence) throws IOException {
        if (index.horizon(groupId) < 0) {
            index.setHorizon(groupId, sequence);
        }
    }

    /** Forgets the group's horizon (its extents are folded away: the log no longer tells the history). */
    public synchronized void dropHorizon(int groupId) throws IOException {
        index.setHorizon(groupId, -1);
    }

    /**
     * The chunk's ranges written or trimmed by records with a sequence above {@code since}, in
     * offset order, adjacent ranges of the same kind merged. A merged extent carries the highest
     * sequence of its records, so this may name more than changed, never less.
     */
    public List<io.fastblock.protocol.ChunkChanges.Range> changedSince(ChunkId chunk, long since) throws IOException {
        List<io.fastblock.protocol.ChunkChanges.Range> out = new ArrayList<>();
        for (Extent e : index.find(chunk, 0, Long.MAX_VALUE / 2)) {
            if (e.sequence() <= since) {
                continue;
            }
            io.fastblock.protocol.ChunkChanges.Range last = out.isEmpty() ? null : out.get(out.size() - 1);
            if (last != null && last.hole() == e.isHole() && last.offset() + last.length() == e.chunkOffset()
                    && (long) last.length() + e.length() <= Integer.MAX_VALUE) {
                out.set(out.size() - 1, new io.fastblock.protocol.ChunkChanges.Range(last.offset(), last.length() + e.length(),
                        last.hole()));
            } else {
                out.add(new io.fastblock.protocol.ChunkChanges.Range(e.chunkOffset(), e.length(), e.isHole()));
            }
        }
        return out;
    }

    public CompletableFuture<ByteBuf> readAsync(ChunkId chunk, long offset, int length, ByteBufAllocator alloc) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return read(chunk, offset, length, alloc);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, readers);
    }

    /**
     * Reads {@code [offset, offset+length)} of a chunk: the log's newest data of each byte, the
     * base file where the log has none, zeros where neither has anything. Every record touched
     * is CRC-checked.
     * @throws CorruptRecordException if a record fails its check
     */
    public ByteBuf read(ChunkId chunk, long offset, int length, ByteBufAllocator alloc) throws IOException {
        long end = offset + length;
        ByteBuf out = alloc.directBuffer(length, length);
        try {
            out.writerIndex(length);
            for (int attempt = 1; ; attempt++) {
                List<Extent> found = index.find(chunk, offset, end);
                try {
                    fill(chunk, offset, end, found, out);
                    return out;
                } catch (SegmentGone gone) {
                    if (attempt == READ_ATTEMPTS) {
                        metrics.corruptReads.increment();
                        throw new CorruptRecordException("index of chunk " + chunk + " keeps pointing at a retired segment: "
                                + gone.getMessage());
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            out.release();
            throw e;
        }
    }

    private void fill(ChunkId chunk, long offset, long end, List<Extent> found, ByteBuf out) throws IOException {
        long covered = offset;
        boolean gaps = false;
        for (Extent e : found) {
            gaps |= e.chunkOffset() > covered;
            covered = Math.max(covered, e.end());
        }
        if (gaps || covered < end) {
            base.read(chunk, offset, out, 0, (int) (end - offset));
        }
        LoadedRuns runs = LoadedRuns.forOneRead();
        for (Extent e : found) {
            long from = Math.max(offset, e.chunkOffset());
            long to = Math.min(end, e.end());
            if (e.isHole()) {
                out.setZero((int) (from - offset), (int) (to - from));
            } else {
                copy(chunk, e, from, to, out, (int) (from - offset), runs);
            }
        }
    }

    /** Copies chunk bytes {@code [from, to)} of extent {@code e} into {@code out} at {@code at}, checking each record used. */
    private void copy(ChunkId chunk, Extent e, long from, long to, ByteBuf out, int at, LoadedRuns runs)
            throws IOException {
        LogPosition where = new LogPosition(e.segment(), e.recordPosition());
        LoadedRuns.Run loaded = runs.get(where);
        // Extents of one run can name different run lengths (an extent merged with a later record
        // spans more of the run than pieces split off it before), so a shorter copy is loaded again.
        if (loaded == null || loaded.bytes.limit() < e.runBytes()) {
            loaded = runs.add(where, loadRun(chunk, e));
        }
        ByteBuffer run = loaded.bytes;
        long runChunkStart = e.chunkOffset() - e.dataOffset();
        long needFrom = e.dataOffset() + (from - e.chunkOffset());
        long needTo = needFrom + (to - from);
        long dataBefore = 0;
        int p = 0;
        while (dataBefore < needTo) {
            ByteBuffer at0 = run.duplicate().position(p);
            LogRecord.Header h = LogRecord.parse(at0);
            if (h == null || p + h.size() > run.limit()) {
                throw corrupt("no valid record", chunk, e.segment(), e.recordPosition() + p);
            }
            if (!h.chunk().equals(chunk) || h.offset() != runChunkStart + dataBefore) {
                throw corrupt("record does not hold the bytes the index expects", chunk, e.segment(), e.recordPosition() + p);
            }
            long recEnd = dataBefore + h.length();
            if (recEnd > needFrom) {
                if (!loaded.checked(p)) {
                    if (!LogRecord.verify(at0, h, e.segment())) {
                        throw corrupt("CRC32C mismatch in record", chunk, e.segment(), e.recordPosition() + p);
                    }
                    loaded.markChecked(p);
                }
                long a = Math.max(dataBefore, needFrom);
                long b = Math.min(recEnd, needTo);
                int src = p + h.headerSize() + (int) (a - dataBefore);
                ByteBuffer slice = run.duplicate();
                slice.position(src).limit(src + (int) (b - a));
                out.setBytes(at + (int) (a - needFrom), slice);
            }
            dataBefore = recEnd;
            p += h.size();
        }
    }

    private CorruptRecordException corrupt(String what, ChunkId chunk, long segment, long position) {
        metrics.corruptReads.increment();
        return new CorruptRecordException(what + " for chunk " + chunk + " at segment " + segment + " position " + position);
    }

    /** The file bytes of the run an extent reads from (a legacy extent: its single record). */
    private ByteBuffer loadRun(ChunkId chunk, Extent e) throws IOException {
        LogSegment seg = segments.acquire(e.segment());
        if (seg == null) {
            throw new SegmentGone(e.segment());
        }
        try {
            int bytes = e.runBytes();
            if (bytes == 0) {
                ByteBuffer head = ByteBuffer.allocate(LogRecord.HEADER);
                LogRecord.Header h = seg.readFully(e.recordPosition(), head) ? LogRecord.parse(head.flip()) : null;
                if (h == null) {
                    throw corrupt("no valid record header", chunk, e.segment(), e.recordPosition());
                }
                bytes = h.size();
            }
            ByteBuffer run = ByteBuffer.allocate(bytes);
            if (!seg.readFully(e.recordPosition(), run)) {
                throw corrupt("record run is cut short", chunk, e.segment(), e.recordPosition());
            }
            return run.flip();
        } catch (java.nio.channels.ClosedChannelException closed) {
            throw new SegmentGone(e.segment());
        } finally {
            seg.release();
        }
    }

    /** Reads and checks chunk bytes {@code [from, to)} of one extent into a new heap buffer (cleaner, fold, scrubber). */
    ByteBuf readExtent(ChunkId chunk, Extent e, long from, long to) throws IOException {
        return readExtent(chunk, e, from, to, LoadedRuns.forOneRead());
    }

    /**
     * The same, reusing (and adding to) runs already loaded and checked by this caller; for a
     * caller reading many pieces of one sealed segment in order (the cleaner).
     */
    ByteBuf readExtent(ChunkId chunk, Extent e, long from, long to, LoadedRuns runs) throws IOException {
        ByteBuf out = Unpooled.buffer((int) (to - from), (int) (to - from));
        out.writerIndex((int) (to - from));
        try {
            copy(chunk, e, from, to, out, 0, runs);
        } catch (IOException | RuntimeException err) {
            out.release();
            throw err;
        }
        return out;
    }

    /**
     * Reads and checks every record an index extent uses. Returns false if the extent's segment
     * was retired meanwhile (its bytes moved; a later pass sees them in their new place).
     * @throws CorruptRecordException if a record fails its check
     */
    boolean verifyExtent(ChunkId chunk, Extent e) throws IOException {
        if (e.isHole()) {
            return false; // a trim's hole has no bytes to check
        }
        try {
            readExtent(chunk, e, e.chunkOffset(), e.end()).release();
            return true;
        } catch (SegmentGone gone) {
            return false;
        }
    }

    /**
     * Moves every log extent of {@code chunk} into its base file: positional writes, one fsync of
     * the base file, then the extents leave the index by compare-and-set (bytes appended
     * meanwhile keep their log extents) in a synced batch, so a restart does not bring them back.
     *
     * <p>Contract: once the returned future completes, and as long as no new log append for
     * {@code chunk} arrives, the log holds nothing for {@code chunk}: reads come from the base
     * file, and in-place writes to the base file are not shadowed by old log extents. A caller
     * switching the chunk to in-place writes (a tail that stops being tail) must stop log appends
     * for it first, and start in-place writes only after this completes.
     */
    public CompletableFuture<Void> fold(ChunkId chunk) {
        return CompletableFuture.runAsync(() -> {
            try {
                foldNow(chunk);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, maintenance);
    }

    private void foldNow(ChunkId chunk) throws IOException {
        if (base == BaseFiles.NONE) {
            throw new IllegalStateException("log store opened without base files cannot fold " + chunk);
        }
        relocation.lock();
        try {
            List<Extent> all = index.find(chunk, 0, Long.MAX_VALUE);
            if (all.isEmpty()) {
                return;
            }
            List<ExtentIndex.Piece> pieces = new ArrayList<>(all.size());
            for (Extent e : all) {
                if (e.isHole()) {
                    // The trim reaches the base file before the hole leaves the index.
                    base.trim(chunk, e.chunkOffset(), e.length());
                    pieces.add(new ExtentIndex.Piece(chunk, e.chunkOffset(), e.end(), e.segment(), e.recordPosition()));
                    continue;
                }
                ByteBuf data = readExtent(chunk, e, e.chunkOffset(), e.end());
                try {
                    base.write(chunk, e.chunkOffset(), data);
                } finally {
                    data.release();
                }
                pieces.add(new ExtentIndex.Piece(chunk, e.chunkOffset(), e.end(), e.segment(), e.recordPosition()));
            }
            base.force(chunk);
            liveBytes.apply(index.remove(pieces));
            logMetrics.folds.increment();
        } finally {
            relocation.unlock();
        }
    }

    // ---- the cleaner's view ----

    /** A live piece of a segment: chunk bytes {@code [start, end)} read through {@code extent}. */
    record LivePiece(ChunkId chunk, long start, long end, Extent extent) {
    }

    /** Summary memory the log's segments hold and what is left of its budget, in bytes; for tests. */
    long[] summaryMemory() {
        long held = 0;
        for (LogSegment s : segments.all()) {
            held += s.summaryBytes();
        }
        return new long[] {held, segments.summaryBudgetLeft()};
    }

    /** Segments the cleaner may reclaim: before the index checkpoint's segment, so replay never needs them. */
    List<LogSegment> sealedSegments() {
        long cp = committer.checkpointSegment();
        List<LogSegment> out = new ArrayList<>();
        for (LogSegment s : segments.all()) {
            if (s.number() < cp && s.number() < segments.active().number()) {
                out.add(s);
            }
        }
        return out;
    }

    /**
     * The chunk bytes the index still reads from {@code segment}, found by walking its records
     * and looking each up; contiguous bytes of one run come back as one piece (at most
     * {@code maxPiece} bytes). Throws {@link CorruptRecordException} if the walk meets a bad header.
     */
    List<LivePiece> livePieces(long segment, int maxPiece) throws IOException {
        LogSegment seg = segments.acquire(segment);
        if (seg == null) {
            return List.of();
        }
        // First the segment's record headers (from its summary, or a walk of it), then one index
        // lookup per chunk (the span its records cover) instead of one per record: a segment of
        // 4 KiB writes holds thousands of records of a few chunks, and each lookup takes the index's
        // lock (the commit thread's too) and copies what it finds. The lookups come after the
        // headers, so they see the index at least as new: a sealed segment's live bytes only
        // shrink, and the moves are compare-and-set.
        List<RecordSummary.Entry> records;
        try {
            records = seg.summarized();
            if (records == null) {
                List<RecordSummary.Entry> walked = new ArrayList<>();
                HeaderWalk walk = new HeaderWalk(seg);
                walk.walk(seg.size(), (pos, h) -> walked.add(new RecordSummary.Entry(pos, h)));
                logMetrics.cleanerWalkBytes.increment(walk.bytesRead());
                records = walked;
            }
        } finally {
            seg.release();
        }
        Map<ChunkId, long[]> spans = new HashMap<>();
        for (RecordSummary.Entry r : records) {
            LogRecord.Header h = r.header();
            long[] span = spans.computeIfAbsent(h.chunk(), c -> new long[] {Long.MAX_VALUE, Long.MIN_VALUE});
            span[0] = Math.min(span[0], h.offset());
            span[1] = Math.max(span[1], h.offset() + h.length());
        }
        Map<ChunkId, List<Extent>> extentsOf = new HashMap<>();
        for (Map.Entry<ChunkId, long[]> e : spans.entrySet()) {
            extentsOf.put(e.getKey(), index.find(e.getKey(), e.getValue()[0], e.getValue()[1]));
        }
        List<LivePiece> out = new ArrayList<>();
        for (RecordSummary.Entry r : records) {
            LogRecord.Header h = r.header();
            long pos = r.position();
            List<Extent> found = extentsOf.get(h.chunk());
            long hEnd = h.offset() + h.length();
            for (int i = firstEndingAfter(found, h.offset()); i < found.size() && found.get(i).chunkOffset() < hEnd; i++) {
                Extent e = found.get(i);
                boolean here = e.segment() == segment && (e.runBytes() == 0 ? e.recordPosition() == pos
                        : e.recordPosition() <= pos && pos < e.recordPosition() + e.runBytes());
                if (!here) {
                    continue;
                }
                long a = Math.max(e.chunkOffset(), h.offset());
                long b = Math.min(e.end(), hEnd);
                LivePiece last = out.isEmpty() ? null : out.get(out.size() - 1);
                if (last != null && last.chunk().equals(h.chunk()) && last.extent().equals(e) && last.end() == a
                        && b - last.start() <= maxPiece) {
                    out.set(out.size() - 1, new LivePiece(h.chunk(), last.start(), b, e));
                } else {
                    for (long s = a; s < b; s += maxPiece) {
                        out.add(new LivePiece(h.chunk(), s, Math.min(b, s + maxPiece), e));
                    }
                }
            }
        }
        return out;
    }

    /** Index of the first of {@code sorted} (a chunk's extents, in offset order, not overlapping) ending after {@code offset}. */
    private static int firstEndingAfter(List<Extent> sorted, long offset) {
        int lo = 0;
        int hi = sorted.size();
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (sorted.get(mid).end() <= offset) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /**
     * Writes repaired bytes for chunk range {@code [offset, offset + data)} that the index reads
     * from the run at ({@code originSegment}, {@code originPosition}): like a cleaner's move, the
     * new record takes over only the bytes that still read from that run, on the live path and on
     * replay, so a write that landed after the repair fetched its bytes is not shadowed. Takes
     * ownership of {@code data}; completes once durable and indexed.
     */
    public CompletableFuture<Void> rewrite(ChunkId chunk, long offset, long sequence, long originSegment, long originPosition,
                                           ByteBuf data) {
        return committer.move(chunk, offset, sequence, originSegment, originPosition, data);
    }

    /** Appends a moved record holding {@code data} (taken over) for a live piece: indexed only where the index still reads the piece's run. */
    CompletableFuture<Void> move(LivePiece piece, ByteBuf data) {
        return rewrite(piece.chunk(), piece.start(), piece.extent().sequence(), piece.extent().segment(),
                piece.extent().recordPosition(), data);
    }

    /** The store's index (tests). */
    ExtentIndex index() {
        return index;
    }

    /** Makes every index change so far durable. */
    void syncIndex() throws IOException {
        index.sync();
    }

    /** Deletes a segment the synced index no longer reads from (the file goes after its last reader). */
    void retire(long segment) throws IOException {
        segments.retire(segment);
        liveBytes.forget(segment);
    }

    /** Index entries in key order after {@code after} (scrubber). */
    List<ExtentIndex.Entry> scanIndex(ExtentIndex.Entry after, int limit) throws IOException {
        return index.scan(after, limit);
    }

    /** Re-indexes the records after the checkpoint; cuts the log at the first torn or corrupt record. */
    private RecoveryReport replay() throws IOException {
        LogPosition cp = index.checkpoint();
        int replayed = 0;
        long truncated = 0;
        List<ExtentIndex.IndexedWrite> pending = new ArrayList<>();
        for (LogSegment seg : segments.all()) {
            if (cp != null && seg.number() < cp.segment()) {
                continue;
            }
            long pos = cp != null && seg.number() == cp.segment() ? cp.position() : 0;
            long size = seg.size();
            if (pos > size) {
                LOG.error("segment {} is {} bytes but the index checkpoint is at {}; replaying from its start",
                        seg.number(), size, pos);
                pos = 0;
            }
            ByteBuffer head = ByteBuffer.allocate(LogRecord.HEADER);
            boolean cut = false;
            while (pos < size) {
                head.clear();
                LogRecord.Header h = seg.readFully(pos, head) ? LogRecord.parse(head.flip()) : null;
                if (h == null || pos + h.size() > size) {
                    cut = true;
                    break;
                }
                ByteBuffer record = ByteBuffer.allocate(h.size());
                if (!seg.readFully(pos, record) || !LogRecord.verify(record.flip(), h, seg.number())) {
                    cut = true;
                    break;
                }
                h = LogRecord.parse(record);
                pending.add(new ExtentIndex.IndexedWrite(h.chunk(), h.offset(), h.length(), h.sequence(), seg.number(), pos,
                        h.size(), h.originSegment(), h.originPosition(), h.trim()));
                pos += record.capacity();
                replayed++;
                if (pending.size() >= REPLAY_BATCH) {
                    index.apply(pending, new LogPosition(seg.number(), pos));
                    pending.clear();
                }
            }
            if (!pending.isEmpty()) {
                index.apply(pending, new LogPosition(seg.number(), pos));
                pending.clear();
            }
            if (cut) {
                if (zerosFrom(seg, pos, size)) {
                    // Zeros written ahead of the records (LogPreallocator): the clean end of the log.
                    LOG.info("log segment {}: records end at {}, {} bytes of zeros written ahead of them dropped", seg.number(),
                            pos, size - pos);
                } else {
                    truncated += size - pos;
                    // A reused file (SegmentSet) also holds its earlier records after the new ones.
                    LOG.warn("log segment {}: its records end at {} (the bytes after them are a torn or corrupt record,"
                            + " or older records of a reused file); cutting {} bytes", seg.number(), pos, size - pos);
                }
                seg.truncate(pos);
                for (LogSegment later : segments.all()) {
                    if (later.number() > seg.number()) {
                        truncated += later.size();
                    }
                }
                segments.dropAfter(seg.number());
                index.apply(List.of(), new LogPosition(seg.number(), pos));
                break;
            }
        }
        if (replayed > 0 || truncated > 0) {
            LOG.info("log recovery: {} records replayed, {} bytes truncated", replayed, truncated);
        }
        return new RecoveryReport(replayed, truncated);
    }

    /**
     * Whether a retired segment's file may be kept for reuse: not when the filesystem is short of
     * space as the cleaner sees it by default, nor when keeping it would bring the reserve within
     * a few segments.
     */
    private boolean roomToKeepFreeFiles(long segmentSize) {
        try {
            return space.freeRatio() > LogCleaner.Settings.DEFAULTS.pressureFreeRatio()
                    && space.usable() - space.reserved() > 4 * segmentSize;
        } catch (IOException e) {
            return false;
        }
    }

    /** Segments started on a retired segment's file since the store opened, and files kept for that now. */
    public long reusedSegmentFiles() {
        return segments.reusedFiles();
    }

    int freeSegmentFiles() {
        return segments.freeFiles();
    }

    /** True if the segment holds only zero bytes in {@code [from, to)}. */
    private static boolean zerosFrom(LogSegment seg, long from, long to) throws IOException {
        ByteBuffer zeros = ByteBuffer.allocate(64 << 10);
        ByteBuffer b = ByteBuffer.allocate(zeros.capacity());
        for (long at = from; at < to; at += b.capacity()) {
            int n = (int) Math.min(b.capacity(), to - at);
            b.clear().limit(n);
            if (!seg.readFully(at, b) || b.flip().mismatch(zeros.duplicate().limit(n)) >= 0) {
                return false;
            }
        }
        return true;
    }

    /** Bytes of zeros written ahead of the records since this store opened (see {@link LogPreallocator}). */
    public long zerosAheadBytes() {
        return preallocator.zeroBytes();
    }

    /** Where the active segment's next record goes; its file may be longer (zeros written ahead, see {@link LogPreallocator}). */
    public LogPosition appendPosition() {
        LogSegment active = segments.active();
        return new LogPosition(active.number(), active.size());
    }

    @Override
    public void close() throws IOException {
        maintenance.shutdown();
        try {
            maintenance.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        preallocator.close();
        committer.close();
        // A clean stop leaves the active segment's file ending at its records. Best effort: replay
        // reads zeros after the records as their end anyway, and the index must close regardless.
        LogSegment active = segments.active();
        try {
            if (active.fileSize() > active.size()) {
                active.truncate(active.size());
            }
        } catch (IOException e) {
            LOG.warn("log segment {}: zeros ahead of the records not cut off at close: {}", active.number(), e.toString());
        }
        readers.shutdown();
        try {
            readers.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        index.close();
        segments.close();
    }
}
