package io.fastblock.storage.io;

import com.sun.jna.Native;
import com.sun.jna.Platform;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The few C library calls the JDK does not offer, through JNA's direct mapping. Where JNA cannot
 * load (another platform, no way to unpack its native part), {@link #AVAILABLE} is false and the
 * callers keep to what the JDK does.
 */
final class LibC {
    private static final Logger LOG = LoggerFactory.getLogger(LibC.class);
    static final int O_RDONLY = 0;
    static final int O_CLOEXEC = 0x80000;
    static final int POSIX_FADV_RANDOM = 1;
    static final boolean AVAILABLE = register();

    private LibC() {
    }

    private static boolean register() {
        if (!Platform.isLinux()) {
            return false;
        }
        try {
            Native.register(LibC.class, Platform.C_LIBRARY_NAME);
            return true;
        } catch (Throwable e) { // UnsatisfiedLinkError, or JNA failing to unpack its library
            LOG.info("no native C library calls ({}): chunk files are read with the kernel's readahead", e.toString());
            return false;
        }
    }

    static native int open(String path, int flags);

    /** Returns 0, or the error number itself (not -1 and errno). */
    static native int posix_fadvise(int fd, long offset, long length, int advice);

    /** {@code buf} is the address to read into (a pointer is a 64-bit integer on the platforms JNA loads on here). */
    static native long pread(int fd, long buf, long count, long offset);

    static native int close(int fd);

    static final int MADV_RANDOM = 1;

    /** Returns 0 or -1 (errno set). */
    static native int madvise(long addr, long length, int advice);

    /** One byte per page of {@code [addr, addr + length)} into {@code vec}, bit 0 set where the page is in memory; 0 or -1. */
    static native int mincore(long addr, long length, byte[] vec);
}
