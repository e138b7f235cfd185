package io.fastblock.storage.io;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.internal.PlatformDependent;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A file mapped read-only, handing out the ranges whose pages are all in the page cache as views
 * of the mapping. A large read that is sent on to a socket then costs one copy (page cache to
 * socket) instead of two (page cache to a buffer, buffer to socket); qemu-img's sequential 1 MiB reads
 * through the gateway ran 9–13% faster so (docs/performance.md, "Large reads from mapped chunk files").
 *
 * <p>A range with any page not in memory is refused ({@code null}): the caller reads it with
 * {@code pread} instead, which fetches it in one request, where faults on the mapping would fetch
 * a page at a time (the mapping is advised {@code MADV_RANDOM}, so a page evicted between the check
 * and the access is fetched alone and no readahead fills the cache with large folios; see
 * {@link NoReadaheadFileIo} for why that matters). A view shows later writes to the same file, as
 * the page cache does. The file must never shrink while mapped: an access past its end faults the
 * process (SIGBUS), and mincore does not rule that out, since Linux keeps a large folio whole when a
 * cut falls inside it and reports its pages past the end as resident. So the owner drops the mapping
 * ({@link #unmap}) and shrinks the file only once {@link #mapped} is false.
 *
 * <p>Unmapping is explicit, not left to the garbage collector: a mapping keeps a deleted file's
 * blocks allocated (a chunk trimmed whole is deleted), and a collector may take hours to find a
 * long-lived mapping unreachable. Each mapping counts its owner and its views out; it is unmapped
 * when {@link #close} (or a remap after the file grew) has dropped it and the last view is released.
 * A mapping is also dropped when the store's {@link MappingBudget} gives its slot to another file;
 * the next read of this one copies, or maps it again if the budget lets it.
 *
 * <p>Reads are not thread-safe (a chunk's reads run on its stripe); views may be released and
 * {@link #close} called from any thread: a read that meets a closed mapping reads as before.
 */
public final class ResidentPages implements Closeable {
    static final int PAGE = 4096;
    /** How soon a file that grew may be mapped again; a reader just behind a writer would otherwise remap per read. */
    static final long REMAP_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final FileIo file;
    private final long remapNanos;
    private final MappingBudget budget;
    private volatile Mapping current;
    /** Mappings made and not yet unmapped: the current one and dropped ones that views still hold. */
    private final AtomicInteger live = new AtomicInteger();
    private volatile boolean closed;
    /** Read since the budget's clock hand last passed: the mapping gets a second chance. */
    private volatile boolean used;
    private long mappedAt;
    private byte[] pages = new byte[256];

    private ResidentPages(FileIo file, long remapNanos, MappingBudget budget) {
        this.file = file;
        this.remapNanos = remapNanos;
        this.budget = budget;
    }

    /**
     * Mapped reads of {@code file}, holding a mapping only while {@code budget} gives it a slot; or
     * null where the C library (for {@code mincore}) or a memory address is missing.
     */
    public static ResidentPages of(FileIo file, MappingBudget budget) {
        return of(file, REMAP_NANOS, budget);
    }

    /** With a budget of its own (one file). */
    public static ResidentPages of(FileIo file) {
        return of(file, REMAP_NANOS);
    }

    static ResidentPages of(FileIo file, long remapNanos) {
        return of(file, remapNanos, new MappingBudget(1));
    }

    static ResidentPages of(FileIo file, long remapNanos, MappingBudget budget) {
        return LibC.AVAILABLE && PlatformDependent.hasUnsafe() ? new ResidentPages(file, remapNanos, budget) : null;
    }

    /**
     * {@code [offset, offset + length)} as a read-only view of the mapping, which the caller must
     * release; or null: the range is not page-aligned, reaches past the file's end, has a page not in
     * memory, or the file cannot be mapped.
     */
    public ByteBuf range(long offset, int length) throws IOException {
        if (length <= 0 || offset % PAGE != 0 || length % PAGE != 0) {
            return null;
        }
        if (closed) {
            return null; // no mapping again for a reader still holding a closed instance
        }
        if (!used) {
            used = true;
        }
        long end = offset + length;
        Mapping m = current;
        if (m == null || m.map.capacity() < end) {
            m = remap(end);
            if (m == null) {
                return null;
            }
        }
        if (!m.retain()) {
            return null; // closed from another thread (a store shutting down)
        }
        if (!resident(m.address + offset, length)) {
            m.release();
            return null;
        }
        return m.view((int) offset, length); // the view takes the reference over
    }

    private boolean resident(long address, int length) {
        int count = length / PAGE;
        if (pages.length < count) {
            pages = new byte[count];
        }
        if (LibC.mincore(address, length, pages) != 0) {
            return false;
        }
        for (int i = 0; i < count; i++) {
            if ((pages[i] & 1) == 0) {
                return false;
            }
        }
        return true;
    }

    private Mapping remap(long end) throws IOException {
        long now = System.nanoTime();
        if (current != null && now - mappedAt < remapNanos) {
            return null;
        }
        long size = file.size();
        if (size < end || size > Integer.MAX_VALUE) {
            return null;
        }
        Mapping[] made = new Mapping[1];
        if (!budget.map(this, () -> (made[0] = mapNow(size, end)) != null)) {
            return null;
        }
        mappedAt = now;
        return made[0];
    }

    /** Maps the file's first {@code size} bytes and installs the mapping; under the budget's lock. */
    private Mapping mapNow(long size, long end) throws IOException {
        ByteBuffer map = file.mapReadOnly(size - size % PAGE);
        if (map == null) {
            return null;
        }
        Mapping m = new Mapping(map, live);
        if (map.capacity() < end) {
            m.release();
            return null;
        }
        // Best effort: without it a fault on an evicted page reads around it.
        LibC.madvise(m.address, map.capacity(), LibC.MADV_RANDOM);
        return install(m) ? m : null;
    }

    private synchronized boolean install(Mapping m) {
        if (closed) {
            m.release();
            return false;
        }
        Mapping old = current;
        current = m;
        if (old != null) {
            old.release();
        }
        return true;
    }

    /** Drops the mapping for good; it is unmapped now, or when the last view still out is released. */
    @Override
    public void close() {
        synchronized (this) {
            closed = true;
        }
        unmap();
        budget.release(this); // after this instance's lock: the budget takes its lock before ours
    }

    /**
     * Drops the mapping (its budget slot was taken, the file is about to be cut, or mapping failed); it
     * is unmapped now or when the last view still out is released, and a later read may map again.
     */
    public synchronized void unmap() {
        Mapping m = current;
        current = null;
        if (m != null) {
            m.release();
        }
    }

    /** Whether a read used this file since the last call; clears the mark. Under the budget's lock. */
    boolean takeUsed() {
        boolean u = used;
        used = false;
        return u;
    }

    /** Whether any mapping of the file is still mapped: held, or dropped while views of it are out. */
    public boolean mapped() {
        return live.get() > 0;
    }

    /** Whether a mapping is held now (tests). */
    boolean isMapped() {
        return current != null;
    }

    /** One mapping and its references: one for {@link ResidentPages} while current, one per view out. */
    private static final class Mapping {
        final ByteBuffer map;
        final long address;
        private final RefCount refs = new RefCount();
        private final AtomicInteger live;

        Mapping(ByteBuffer map, AtomicInteger live) {
            this.map = map;
            this.address = PlatformDependent.directBufferAddress(map);
            this.live = live;
            live.incrementAndGet();
        }

        /** Takes a reference unless the mapping is already gone (every reference released). */
        boolean retain() {
            return refs.retain();
        }

        /** A view holding a reference the caller took with {@link #retain}. */
        ByteBuf view(int offset, int length) {
            return new View(Unpooled.wrappedBuffer(map.slice(offset, length)), this);
        }

        void release() {
            if (refs.release()) {
                try {
                    PlatformDependent.freeDirectBuffer(map); // munmap, through the buffer's own cleaner
                } catch (RuntimeException e) {
                    // No cleaner to call here: the collector unmaps it once it finds it unreachable.
                } finally {
                    live.decrementAndGet();
                }
            }
        }
    }

    /**
     * A read-only slice of a mapping that gives its reference back when its count reaches zero. A
     * composite of one component only for its {@code deallocate} hook: derived buffers (slices,
     * duplicates) share the composite's count, so the hook runs whichever releases last.
     */
    private static final class View extends CompositeByteBuf {
        private final Mapping mapping;

        View(ByteBuf slice, Mapping mapping) {
            super(UnpooledByteBufAllocator.DEFAULT, true, 1, slice);
            this.mapping = mapping;
        }

        @Override
        public boolean isReadOnly() {
            return true;
        }

        @Override
        protected void deallocate() {
            try {
                super.deallocate();
            } finally {
                mapping.release();
            }
        }
    }
}
