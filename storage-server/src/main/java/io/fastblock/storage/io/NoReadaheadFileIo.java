package io.fastblock.storage.io;

import com.sun.jna.Native;
import com.sun.jna.Pointer;
import io.netty.util.internal.PlatformDependent;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Reads a file through a descriptor of its own on which the kernel reads nothing ahead
 * ({@code POSIX_FADV_RANDOM}, which holds for that open file, not for the file's other handles).
 *
 * <p>Why: after memory reclaim has dropped a chunk file's pages, a sequential read through a
 * handle with readahead brings them back in large folios (up to 2 MiB), and ext4 walks every
 * block of a folio on each small write into it: a volume read back so took 4 KiB random writes
 * about 15% slower (docs/performance.md, "Scrub reads around the page cache"). Without readahead
 * a read fills the page cache with single pages, exactly what it asked for. A read still comes
 * from the page cache when the pages are there, so what the node's in-place writes left there
 * is read as before.
 *
 * <p>Read-only: every other call throws.
 */
final class NoReadaheadFileIo implements FileIo {
    private static final int EINTR = 4;
    private final Path path;
    private final int fd;
    /** One for the open handle, one per read under way: the descriptor is closed when none is left, so a
     * read racing {@link #close} never reads a descriptor number the process has since given to another file. */
    private final RefCount refs = new RefCount();
    private volatile boolean closed;

    private NoReadaheadFileIo(Path path, int fd) {
        this.path = path;
        this.fd = fd;
    }

    /** A handle on {@code file}, or null where the C library cannot be called. */
    static FileIo open(Path file) throws IOException {
        if (!LibC.AVAILABLE) {
            return null;
        }
        int fd = LibC.open(file.toString(), LibC.O_RDONLY | LibC.O_CLOEXEC);
        if (fd < 0) {
            throw new IOException("open " + file + " for reading failed: errno " + Native.getLastError());
        }
        int err = LibC.posix_fadvise(fd, 0, 0, LibC.POSIX_FADV_RANDOM);
        if (err != 0) {
            LibC.close(fd);
            throw new IOException("posix_fadvise(RANDOM) on " + file + " failed: errno " + err);
        }
        return new NoReadaheadFileIo(file, fd);
    }

    @Override
    public Path path() {
        return path;
    }

    @Override
    public int read(ByteBuffer dst, long position) throws IOException {
        if (!refs.retain()) {
            throw new ClosedChannelException();
        }
        try {
            return pread(dst, position);
        } finally {
            release();
        }
    }

    private void release() {
        if (refs.release()) {
            LibC.close(fd);
        }
    }

    private int pread(ByteBuffer dst, long position) throws IOException {
        int want = dst.remaining();
        if (want == 0) {
            return 0;
        }
        ByteBuffer into = dst.isDirect() ? dst : ByteBuffer.allocateDirect(want);
        long n;
        do {
            n = LibC.pread(fd, address(into) + into.position(), want, position);
        } while (n < 0 && Native.getLastError() == EINTR); // a signal arrived first; the JDK's reads retry too
        if (n < 0) {
            throw new IOException("pread of " + path + " at " + position + " failed: errno " + Native.getLastError());
        }
        if (n == 0) {
            return -1;
        }
        if (into != dst) {
            dst.put(into.limit((int) n));
        } else {
            dst.position(dst.position() + (int) n);
        }
        return (int) n;
    }

    /** Through Netty where it can (a field read; JNA's pointer is a JNI call and an object per read), else JNA. */
    private static long address(ByteBuffer direct) {
        return PlatformDependent.hasUnsafe() ? PlatformDependent.directBufferAddress(direct)
                : Pointer.nativeValue(Native.getDirectBufferPointer(direct));
    }

    @Override
    public int write(ByteBuffer src, long position) {
        throw new UnsupportedOperationException("read-only handle on " + path);
    }

    @Override
    public void force(boolean metadata) {
        throw new UnsupportedOperationException("read-only handle on " + path);
    }

    @Override
    public long size() throws IOException {
        return Files.size(path);
    }

    @Override
    public void truncate(long size) {
        throw new UnsupportedOperationException("read-only handle on " + path);
    }

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            release();
        }
    }

    @Override
    public String toString() {
        return "no-readahead " + path;
    }
}
