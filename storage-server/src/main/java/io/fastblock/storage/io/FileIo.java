package io.fastblock.storage.io;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * One open file as the stores see it: positional reads and writes, {@link #force}, size and
 * truncate. Every store goes through this interface rather than {@code FileChannel} so tests can
 * put a fault-injecting layer underneath (power loss drops what was not forced, a torn write
 * keeps only some sectors of the last write) and check what survives.
 *
 * <p>What a caller may rely on: a write is visible to reads of this process at once; it
 * survives a process crash; it survives a power loss only once {@link #force} returned after it.
 * A new file's name survives a power loss only once its directory was synced with
 * {@link FileIoFactory#syncDirectory}.
 */
public interface FileIo extends Closeable {
    Path path();

    /** Reads into {@code dst} from {@code position}; returns the bytes read, or -1 at the end of the file. */
    int read(ByteBuffer dst, long position) throws IOException;

    /** Writes from {@code src} at {@code position}; returns the bytes written (possibly fewer than remain). */
    int write(ByteBuffer src, long position) throws IOException;

    /** Makes every write so far durable; {@code metadata} also forces the file's size and times. */
    void force(boolean metadata) throws IOException;

    long size() throws IOException;

    /**
     * What every write through this handle must be a multiple of: its position, its length and its
     * buffer's address. 1 for a file written through the page cache; the filesystem's block size for
     * one opened by {@link FileIoFactory#openDirect}, and for every read through one opened by
     * {@link FileIoFactory#openDirectReads}.
     */
    default int writeAlignment() {
        return 1;
    }

    /**
     * The file's first {@code size} bytes mapped read-only ({@link ResidentPages}), or null where this
     * handle cannot map (the default: a test's fault-injecting layer sees every read). The caller must
     * not touch the mapping past the file's end.
     */
    default ByteBuffer mapReadOnly(long size) throws IOException {
        return null;
    }

    /** Cuts the file to {@code size} bytes (no-op if it is already that short). */
    void truncate(long size) throws IOException;

    /** Fills {@code dst} from {@code position}; returns false if the file ends first (dst then holds what was there). */
    default boolean readFully(ByteBuffer dst, long position) throws IOException {
        long at = position;
        while (dst.hasRemaining()) {
            int r = read(dst, at);
            if (r < 0) {
                return false;
            }
            at += r;
        }
        return true;
    }

    /**
     * Makes {@code [position, position + length)} read as zeros, giving its disk blocks back where
     * the file layer can (the file keeps its size). Like a write: durable only after {@link #force}.
     */
    default void zeroRange(long position, long length) throws IOException {
        ByteBuffer zeros = ByteBuffer.allocateDirect((int) Math.min(length, 1 << 20));
        for (long at = position; at < position + length; at += zeros.capacity()) {
            int n = (int) Math.min(zeros.capacity(), position + length - at);
            writeFully(zeros.duplicate().limit(n), at);
        }
    }

    /** Writes all of {@code src} at {@code position}. */
    default void writeFully(ByteBuffer src, long position) throws IOException {
        long at = position;
        while (src.hasRemaining()) {
            at += write(src, at);
        }
    }

    /**
     * Writes all of {@code srcs}, one after the other, from {@code position}: the same bytes as
     * writing each in turn, where the layer can in one gathered system call (the log's group
     * commit writes a whole batch of records this way).
     */
    default void writeFully(ByteBuffer[] srcs, long position) throws IOException {
        long at = position;
        for (ByteBuffer b : srcs) {
            int n = b.remaining();
            writeFully(b, at);
            at += n;
        }
    }
}
