package io.fastblock.storage.log;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** One file {@code log/<number>.seg} of records; appended to by the group committer only. */
public final class LogSegment implements Closeable {
    private final long number;
    private final Path path;
    private final FileChannel channel;
    private long size;

    private LogSegment(long number, Path path, FileChannel channel, long size) {
        this.number = number;
        this.path = path;
        this.channel = channel;
        this.size = size;
    }

    public static Path pathOf(Path logDir, long number) {
        return logDir.resolve(String.format("%012d.seg", number));
    }

    public static LogSegment open(Path logDir, long number) throws IOException {
        Path p = pathOf(logDir, number);
        FileChannel ch = FileChannel.open(p, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
        return new LogSegment(number, p, ch, ch.size());
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

    /** Appends the buffers as one record; returns its position. Only the committer thread calls this. */
    long append(ByteBuffer[] parts) throws IOException {
        long pos;
        synchronized (this) {
            pos = size;
        }
        long at = pos;
        for (ByteBuffer b : parts) {
            while (b.hasRemaining()) {
                at += channel.write(b, at);
            }
        }
        synchronized (this) {
            size = at;
        }
        return pos;
    }

    void force() throws IOException {
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

    /** Cuts a torn tail off the segment. */
    synchronized void truncate(long position) throws IOException {
        channel.truncate(position);
        channel.force(true);
        size = position;
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
