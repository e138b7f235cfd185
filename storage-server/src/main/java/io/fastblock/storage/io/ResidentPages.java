package io.fastblock.storage.io;

import io.netty.util.internal.PlatformDependent;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * A file mapped read-only, handing out the ranges whose pages are all in the page cache as slices
 * of the mapping. A large read that is sent on to a socket then costs one copy (page cache to
 * socket) instead of two (page cache to a buffer, buffer to socket); sequential 1 MiB reads
 * through the gateway ran 13% faster so (docs/performance.md, "Large reads from mapped chunk files").
 *
 * <p>A range with any page not in memory is refused ({@code null}): the caller reads it with
 * {@code pread} instead, which fetches it in one request, where faults on the mapping would fetch
 * a page at a time (the mapping is advised {@code MADV_RANDOM}, so a page evicted between the check
 * and the access is fetched alone and no readahead fills the cache with large folios; see
 * {@link NoReadaheadFileIo} for why that matters). A slice stays valid after the file is closed or
 * replaced (the mapping lives as long as any slice of it); it shows later writes to the same file,
 * as the page cache does. The file must never shrink while mapped: an access past its end faults
 * the process.
 *
 * <p>Not thread-safe: a chunk's reads run on its stripe.
 */
public final class ResidentPages {
    static final int PAGE = 4096;
    /** How soon a file that grew may be mapped again; a reader just behind a writer would otherwise remap per read. */
    static final long REMAP_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final FileIo file;
    private final long remapNanos;
    private ByteBuffer map;
    private long mappedAt;
    private byte[] pages = new byte[256];

    private ResidentPages(FileIo file, long remapNanos) {
        this.file = file;
        this.remapNanos = remapNanos;
    }

    /** Mapped reads of {@code file}, or null where the C library (for {@code mincore}) or a memory address is missing. */
    public static ResidentPages of(FileIo file) {
        return of(file, REMAP_NANOS);
    }

    static ResidentPages of(FileIo file, long remapNanos) {
        return LibC.AVAILABLE && PlatformDependent.hasUnsafe() ? new ResidentPages(file, remapNanos) : null;
    }

    /**
     * {@code [offset, offset + length)} as a read-only slice of the mapping, or null: the range is not
     * page-aligned, reaches past the file's end, has a page not in memory, or the file cannot be mapped.
     */
    public ByteBuffer range(long offset, int length) throws IOException {
        if (length <= 0 || offset % PAGE != 0 || length % PAGE != 0) {
            return null;
        }
        long end = offset + length;
        ByteBuffer m = map;
        if (m == null || m.capacity() < end) {
            m = remap(end);
            if (m == null) {
                return null;
            }
        }
        int count = length / PAGE;
        if (pages.length < count) {
            pages = new byte[count];
        }
        long address = PlatformDependent.directBufferAddress(m) + offset;
        if (LibC.mincore(address, length, pages) != 0) {
            return null;
        }
        for (int i = 0; i < count; i++) {
            if ((pages[i] & 1) == 0) {
                return null;
            }
        }
        return m.slice((int) offset, length);
    }

    private ByteBuffer remap(long end) throws IOException {
        long now = System.nanoTime();
        if (map != null && now - mappedAt < remapNanos) {
            return null;
        }
        long size = file.size();
        if (size < end || size > Integer.MAX_VALUE) {
            return null;
        }
        ByteBuffer m = file.mapReadOnly(size - size % PAGE);
        if (m == null || m.capacity() < end) {
            return null;
        }
        // Best effort: without it a fault on an evicted page reads around it.
        LibC.madvise(PlatformDependent.directBufferAddress(m), m.capacity(), LibC.MADV_RANDOM);
        map = m;
        mappedAt = now;
        return m;
    }
}
