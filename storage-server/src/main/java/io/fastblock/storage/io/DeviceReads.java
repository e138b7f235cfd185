package io.fastblock.storage.io;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Reads through a handle from {@link FileIoFactory#openDirectReads}. O_DIRECT wants the position,
 * the length and the buffer's address all to be multiples of the handle's alignment, so a read
 * covers the aligned blocks around the bytes asked for, in a buffer of the calling thread's, and
 * hands back a view of those bytes. Background readers (the scrubbers, the log cleaner) read this
 * way so that what they read neither costs the page cache's allocation and copy nor comes back into
 * it as readahead's large folios, which make every later small write into them dearer
 * (docs/performance.md, "Scrub reads around the page cache").
 */
public final class DeviceReads {
    private static final ThreadLocal<ByteBuffer> SCRATCH = new ThreadLocal<>();

    private DeviceReads() {
    }

    /**
     * The bytes {@code [from, from + length)} as the device holds them: a view (index 0 is
     * {@code from}) into this thread's buffer, valid until the thread's next read here, with fewer
     * bytes remaining where the file ends first.
     */
    public static ByteBuffer read(FileIo direct, long from, int length) throws IOException {
        int align = direct.writeAlignment();
        long alignedFrom = from - from % align;
        long to = from + length;
        long alignedTo = (to + align - 1) / align * align;
        ByteBuffer buf = scratch((int) (alignedTo - alignedFrom), align);
        // Only the last read can be short (the end of the file); another read from there would be unaligned.
        while (buf.hasRemaining()) {
            int r = direct.read(buf, alignedFrom + buf.position());
            if (r <= 0 || buf.position() % align != 0) {
                break;
            }
        }
        int got = buf.position();
        int skip = (int) (from - alignedFrom);
        int start = Math.min(skip, got);
        return buf.duplicate().position(start).limit(Math.max(start, Math.min(got, skip + length))).slice();
    }

    /** This thread's buffer: {@code bytes} long, its address a multiple of {@code align}. */
    private static ByteBuffer scratch(int bytes, int align) {
        ByteBuffer b = SCRATCH.get();
        if (b == null || b.capacity() < bytes || b.alignmentOffset(0, align) != 0) {
            b = ByteBuffer.allocateDirect(bytes + align).alignedSlice(align);
            SCRATCH.set(b);
        }
        return b.clear().limit(bytes);
    }
}
