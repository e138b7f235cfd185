package io.fastblock.storage.log;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import io.fastblock.storage.io.FileIo;
import io.fastblock.storage.io.FileIoFactory;
import io.fastblock.storage.io.RefCount;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One file {@code log/<number>.seg} of records; appended to by the group committer only.
 * Reference counted: the segment set holds one reference and every reader one more while it
 * reads, so a segment the cleaner retires is closed and deleted only after the last read of it.
 *
 * <p>While it is the active segment its file may reach past its records: a {@link LogPreallocator}
 * writes and forces zeros ahead of them ({@link #zeroAhead}), so that a small group commit
 * overwrites blocks the file already has and its fdatasync flushes no metadata. The zeros are
 * never written over records: the preallocator starts at or after the records' end, and a batch
 * that reaches past the forced zeros is written under the same lock. Replay reads an all-zero
 * header as the clean end of the records. When the segment is sealed (the log rolled on), its
 * file is cut back to its records before it is forced for the last time, and so before any record
 * of the next segment is forced: a sealed segment never ends in zeros that would end replay early.
 *
 * <p>A segment may also start on the file of a segment the log retired ({@link #reuse}): then the
 * file already has its blocks, and past the records it holds the old segment's records, which are
 * bound to the old number ({@link LogRecord}) and end replay like a torn record. Sealing and a
 * clean close cut that tail off as they cut zeros.
 *
 * <p>Where the filesystem allows, the active segment is written around the page cache by an
 * {@link AlignedAppender} (records and zeros alike, so no block is ever written both ways); reads
 * still go through the cache. Then the records' last block is padded with zeros and the zeros
 * ahead start at a block boundary.
 */
public final class LogSegment implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(LogSegment.class);
    /** The fall-back to the page cache is said once per process, not once per segment. */
    private static final AtomicBoolean TOLD_NO_DIRECT = new AtomicBoolean();
    private final long number;
    private final Path path;
    /** Through the node's file layer, so a simulated power loss drops the log's unforced tail too. */
    private final FileIo channel;
    private final FileIoFactory files;
    private long size;
    /** Guards {@link #zeroedTo}, {@link #sealed} and every write past the forced zeros; taken before {@code this}. */
    private final Object padLock = new Object();
    /** The file is known to hold forced zeros (or records) up to here. */
    private volatile long zeroedTo;
    /** The log rolled on: no more records, no more zeros; cut back to its records at its last force. */
    private volatile boolean sealed;
    private boolean cutToRecords;
    private final RefCount refs = new RefCount();
    /** Appended records not yet written (committer thread only), from {@link #pendingAt}. */
    private final List<ByteBuffer> pending = new ArrayList<>();
    private long pendingAt;
    /** Writes around the page cache, opened at the first write; null before, or where there are none. */
    private volatile AlignedAppender appender;
    private boolean appenderTried;

    /** Every record in the file is bound to its segment ({@link LogRecord}), so the file may be reused. */
    private final boolean boundOnly;
    /** Where the file goes instead of being deleted when the segment is retired; null: deleted. */
    private volatile Path reuseAs;
    /** The headers of the records appended here since it was created; null for a segment opened with records in it. */
    private volatile RecordSummary summary;

    private LogSegment(long number, Path path, FileIo channel, FileIoFactory files, long size, long written,
                       boolean boundOnly) {
        this.number = number;
        this.path = path;
        this.channel = channel;
        this.files = files;
        this.size = size;
        this.zeroedTo = written;
        this.boundOnly = boundOnly;
    }

    public static Path pathOf(Path logDir, long number) {
        return logDir.resolve(String.format("%012d.seg", number));
    }

    public static LogSegment open(Path logDir, long number) throws IOException {
        return open(logDir, number, FileIoFactory.real());
    }

    public static LogSegment open(Path logDir, long number, FileIoFactory files) throws IOException {
        Path p = pathOf(logDir, number);
        FileIo ch = files.open(p, true);
        try {
            long size = ch.size();
            return new LogSegment(number, p, ch, files, size, size, size == 0 || firstRecordBound(ch));
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    /**
     * Opens segment {@code number} on a file the log used before (already renamed to the segment's
     * name): no records yet, but blocks up to the file's length that a small commit overwrites
     * without allocating, as it does over the zeros a {@link LogPreallocator} writes. What the file
     * held before is bound to another segment number, so replay never takes it for records of this one.
     */
    static LogSegment reuse(Path logDir, long number, FileIoFactory files) throws IOException {
        Path p = pathOf(logDir, number);
        FileIo ch = files.open(p, false);
        try {
            return new LogSegment(number, p, ch, files, 0, ch.size(), true);
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    /** The log writes only bound records now; a file that starts with an unbound one was written by an earlier version. */
    private static boolean firstRecordBound(FileIo ch) throws IOException {
        ByteBuffer head = ByteBuffer.allocate(LogRecord.HEADER);
        LogRecord.Header h = readFully(ch, 0, head) ? LogRecord.parse(head.flip()) : null;
        return h != null && h.bound();
    }

    /** True if the file holds only records bound to this segment (or none), so it can be reused once retired. */
    boolean reusable() {
        return boundOnly;
    }

    public long number() {
        return number;
    }

    public Path path() {
        return path;
    }

    /** Bytes written so far (the next record's position). */
    public synchronized long size() {
        return size;
    }

    /**
     * Appends the buffers as one record and returns its position. The bytes reach the file at the
     * next {@link #writePending} (the committer calls it before {@link #force}): one gathered
     * write per batch instead of two per record. Nothing reads a record before its batch is
     * forced and indexed. The buffers must stay valid until then. Only the committer thread calls this.
     */
    long append(ByteBuffer[] parts) {
        long pos;
        synchronized (this) {
            pos = size;
        }
        if (pending.isEmpty()) {
            pendingAt = pos;
        }
        long at = pos;
        for (ByteBuffer b : parts) {
            at += b.remaining();
            pending.add(b);
        }
        synchronized (this) {
            size = at;
        }
        return pos;
    }

    /**
     * Starts noting the headers of the records appended from now on ({@link RecordSummary}); only
     * for an empty segment, so that the summary covers all its records.
     */
    void startSummary(Semaphore budget) {
        synchronized (this) {
            if (size == 0 && summary == null) {
                summary = new RecordSummary(budget);
            }
        }
    }

    /** Notes the header of the record {@link #append} just put at {@code position} (committer thread). */
    void summarize(long position, ByteBuffer header) {
        RecordSummary s = summary;
        if (s != null) {
            s.add(position, header);
        }
    }

    /**
     * The segment's records from its summary, in order, or null when there is none that covers
     * exactly the records now in it: the segment must then be walked ({@link HeaderWalk}).
     */
    List<RecordSummary.Entry> summarized() {
        RecordSummary s = summary;
        return s == null ? null : s.entries(size());
    }

    private void cutSummary(long position) {
        RecordSummary s = summary;
        if (s != null) {
            s.cutBack(position);
        }
    }

    /** Bytes of summary memory this segment holds. */
    long summaryBytes() {
        RecordSummary s = summary;
        return s == null ? 0 : s.bytes();
    }

    /** Gives the summary's memory back. */
    void dropSummary() {
        RecordSummary s = summary;
        summary = null;
        if (s != null) {
            s.release();
        }
    }

    /** Writes the records appended since the last call, in one gathered write. */
    void writePending() throws IOException {
        if (pending.isEmpty()) {
            return;
        }
        ByteBuffer[] parts = pending.toArray(ByteBuffer[]::new);
        pending.clear();
        long end = size(); // everything appended since the last call is pending
        AlignedAppender direct = appender();
        long reach = direct == null ? end : direct.roundUp(end);
        if (reach <= zeroedTo) {
            // Inside the forced zeros: the preallocator only writes past them.
            write(direct, parts);
            return;
        }
        synchronized (padLock) {
            // Past them: after any zeros being written there now, never before.
            write(direct, parts);
        }
    }

    private void write(AlignedAppender direct, ByteBuffer[] parts) throws IOException {
        if (direct != null) {
            direct.write(parts, pendingAt);
        } else {
            channel.writeFully(parts, pendingAt);
        }
    }

    /** The direct writer, opened on first use while the segment takes records; null where there is none. */
    private AlignedAppender appender() throws IOException {
        AlignedAppender a = appender;
        if (a != null || appenderTried) {
            return a;
        }
        synchronized (padLock) {
            if (!appenderTried && !sealed) {
                appenderTried = true;
                FileIo d = files.openDirect(path);
                if (d != null && AlignedAppender.supports(d.writeAlignment())) {
                    appender = new AlignedAppender(d, channel);
                } else if (d != null) {
                    // Blocks too large to rewrite for every small batch: written through the page cache instead.
                    if (!TOLD_NO_DIRECT.getAndSet(true)) {
                        LOG.info("log segment {}: direct writes would need blocks of {} bytes; the log is written through"
                                + " the page cache", number, d.writeAlignment());
                    }
                    d.close();
                }
            }
            return appender;
        }
    }

    void force() throws IOException {
        writePending();
        if (!sealed) {
            channel.force(false);
            return;
        }
        synchronized (padLock) {
            if (!cutToRecords) {
                long records = size();
                if (channel.size() > records) {
                    channel.truncate(records);
                }
                zeroedTo = Math.min(zeroedTo, records);
                cutToRecords = true;
            }
        }
        channel.force(true);
        closeAppender(); // sealed: no more records, no more zeros
    }

    private void closeAppender() throws IOException {
        synchronized (padLock) {
            AlignedAppender a = appender;
            appender = null;
            appenderTried = true;
            if (a != null) {
                a.close();
            }
        }
    }

    /** The log rolled on past this segment: no more zeros are written ahead of it, and its next force cuts them off. */
    void seal() {
        synchronized (padLock) {
            sealed = true;
        }
    }

    /** Bytes of forced zeros ahead of the records (0 when there are none). */
    long zeroedAhead() {
        return Math.max(0, zeroedTo - size());
    }

    /**
     * Writes one piece of zeros (at most {@code zeros.remaining()} bytes, forced) from the end of the
     * records, or of the zeros already there, towards {@code target}. Returns the bytes written: 0
     * once the zeros reach {@code target} or the segment is sealed. Called by the preallocator only.
     */
    long zeroAhead(long target, ByteBuffer zeros) throws IOException {
        AlignedAppender direct = appender();
        synchronized (padLock) {
            long from = Math.max(zeroedTo, size());
            if (direct != null) {
                // Whole blocks after the records' last one, which the committer pads itself.
                from = direct.roundUp(from);
            }
            if (sealed || from >= target) {
                return 0;
            }
            int n = (int) Math.min(zeros.remaining(), target - from);
            if (direct != null) {
                n &= -direct.block();
                if (n == 0) {
                    return 0;
                }
                direct.writeZeros(from, n);
            } else {
                channel.writeFully(new ByteBuffer[]{zeros.duplicate().limit(zeros.position() + n)}, from);
            }
            channel.force(false);
            zeroedTo = from + n;
            return n;
        }
    }

    /** Bytes of the file, records and any zeros written ahead of them. */
    long fileSize() throws IOException {
        return channel.size();
    }

    /**
     * A handle that reads the segment around the page cache ({@link FileIoFactory#openDirectReads}),
     * or null where its files cannot be read so; the caller closes it.
     */
    FileIo openDirectReads() throws IOException {
        return files.openDirectReads(path);
    }

    /** Fills {@code dst} from {@code position}; returns false if the file ends first. */
    public boolean readFully(long position, ByteBuffer dst) throws IOException {
        return readFully(channel, position, dst);
    }

    private static boolean readFully(FileIo channel, long position, ByteBuffer dst) throws IOException {
        long at = position;
        while (dst.hasRemaining()) {
            int r = channel.read(dst, at);
            if (r < 0) {
                return false;
            }
            at += r;
        }
        return true;
    }

    /** Cuts off whatever a failed append left after {@code position}, if anything reached the file (zeros ahead included). */
    void cutBack(long position) throws IOException {
        synchronized (padLock) {
            synchronized (this) {
                pending.clear();
                forgetPartialBlock();
                cutSummary(position);
                if (channel.size() > position) {
                    truncate(position);
                } else {
                    size = Math.min(size, position); // appended but never written: nothing to cut
                }
            }
        }
    }

    /** Cuts a torn tail (or the zeros ahead of the records) off the segment. */
    void truncate(long position) throws IOException {
        synchronized (padLock) {
            synchronized (this) {
                forgetPartialBlock();
                cutSummary(position);
                channel.truncate(position);
                channel.force(true);
                size = position;
                zeroedTo = Math.min(zeroedTo, position);
            }
        }
    }

    private void forgetPartialBlock() {
        AlignedAppender a = appender;
        if (a != null) {
            a.forget();
        }
    }

    /** Takes a reference for a reader; false if the segment is already gone. */
    boolean retain() {
        return refs.retain();
    }

    /**
     * Drops a reference; the last one closes the file and, if the segment was retired, deletes it
     * or renames it for reuse.
     */
    void release() throws IOException {
        if (refs.release()) {
            closeAppender();
            channel.close();
            if (retired) {
                Path to = reuseAs;
                if (to != null) {
                    files.rename(path, to);
                    afterRename.run();
                } else {
                    files.delete(path);
                }
            }
        }
    }

    private volatile boolean retired;
    private volatile Runnable afterRename = () -> { };

    /** Drops the segment set's reference and deletes the file once no reader holds it. */
    void retire() throws IOException {
        dropSummary();
        retired = true;
        release();
    }

    /**
     * Drops the segment set's reference; once no reader holds the file it is renamed to {@code to}
     * (a {@link #reusable} segment only), and then {@code renamed} runs.
     */
    void retireForReuse(Path to, Runnable renamed) throws IOException {
        if (!boundOnly) {
            throw new IllegalStateException("segment " + number + " holds unbound records and cannot be reused");
        }
        reuseAs = to;
        afterRename = renamed;
        retire();
    }

    @Override
    public void close() throws IOException {
        dropSummary();
        closeAppender();
        channel.close();
    }
}
