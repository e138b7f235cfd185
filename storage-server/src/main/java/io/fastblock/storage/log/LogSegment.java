package io.fastblock.storage.log;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import io.fastblock.storage.io.FileIo;
import io.fastblock.storage.io.FileIoFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One file {@code log/<number>.seg} of records; appended to by the group committer only.
 * Reference counted: the segment set holds one reference and every reader one more while it
 * reads, so a segment the cleaner retires is closed and deleted only after the last read of it.
 */
public final class LogSegment implements Closeable {
    private final long number;
    private final Path path;
    /** Through the node's file layer, so a simulated power loss drops the log's unforced tail too. */
    private final FileIo channel;
    private final FileIoFactory files;
    private long size;
    private final AtomicInteger refs = new AtomicInteger(1);
    /** Appended records not yet written (committer thread only), from {@link #pendingAt}. */
    private final List<ByteBuffer> pending = new ArrayList<>();
    private long pendingAt;

    private LogSegment(long number, Path path, FileIo channel, FileIoFactory files, long size) {
        this.number = number;
        this.path = path;
        this.channel = channel;
        this.files = files;
        this.size = size;
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
            return new LogSegment(number, p, ch, files, ch.size());
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
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

    /** Writes the records appended since the last call, in one gathered write. */
    void writePending() throws IOException {
        if (pending.isEmpty()) {
            return;
        }
        ByteBuffer[] parts = pending.toArray(ByteBuffer[]::new);
        pending.clear();
        channel.writeFully(parts, pendingAt);
    }

    void force() throws IOException {
        writePending();
        channel.force(false);
    }

    /** Fills {@code dst} from {@code position}; returns false if the file ends first. */
    public boolean readFully(long position, ByteBuffer dst) throws IOException {
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

    /** Cuts off whatever a failed append left after {@code position}, if anything reached the file. */
    synchronized void cutBack(long position) throws IOException {
        pending.clear();
        if (channel.size() > position) {
            truncate(position);
        } else {
            size = Math.min(size, position); // appended but never written: nothing to cut
        }
    }

    /** Cuts a torn tail off the segment. */
    synchronized void truncate(long position) throws IOException {
        channel.truncate(position);
        channel.force(true);
        size = position;
    }

    /** Takes a reference for a reader; false if the segment is already gone. */
    boolean retain() {
        while (true) {
            int r = refs.get();
            if (r <= 0) {
                return false;
            }
            if (refs.compareAndSet(r, r + 1)) {
                return true;
            }
        }
    }

    /** Drops a reference; the last one closes the file and, if {@code deleteWhenFree} was set, deletes it. */
    void release() throws IOException {
        if (refs.decrementAndGet() == 0) {
            channel.close();
            if (deleteWhenFree) {
                files.delete(path);
            }
        }
    }

    private volatile boolean deleteWhenFree;

    /** Drops the segment set's reference and deletes the file once no reader holds it. */
    void retire() throws IOException {
        deleteWhenFree = true;
        release();
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
