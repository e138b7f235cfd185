package io.fastblock.storage.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.Native;
import com.sun.jna.Platform;
import com.sun.jna.Pointer;
import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** What a test sees of a file in the page cache: its pages dropped, its cached pages counted. */
public final class PageCache {
    private static final int PAGE = 4096;
    private static final int POSIX_FADV_DONTNEED = 4;

    static {
        Native.register(PageCache.class, Platform.C_LIBRARY_NAME);
    }

    private PageCache() {
    }

    private static native int mincore(Pointer addr, long length, byte[] vec);

    /** Drops the file's (clean) pages. */
    public static void evict(Path f) throws IOException {
        int fd = LibC.open(f.toString(), LibC.O_RDONLY);
        assertTrue(fd >= 0);
        try {
            assertEquals(0, LibC.posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED));
        } finally {
            LibC.close(fd);
        }
    }

    /** Pages of the file in the page cache: mincore over a mapping of it that is never read. */
    static long cachedPages(Path f) throws IOException {
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
            MappedByteBuffer map = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size());
            byte[] vec = new byte[(int) ((ch.size() + PAGE - 1) / PAGE)];
            assertEquals(0, mincore(Native.getDirectBufferPointer(map), ch.size(), vec));
            long n = 0;
            for (byte v : vec) {
                n += v & 1;
            }
            return n;
        }
    }
}
