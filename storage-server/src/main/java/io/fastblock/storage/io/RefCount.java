package io.fastblock.storage.io;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * One reference for the owner and one per user under way, for a resource that must outlive every
 * use that started before it was let go (a log segment being read, a file descriptor being read
 * through): whoever drops the last reference frees it.
 */
public final class RefCount {
    private final AtomicInteger refs = new AtomicInteger(1);

    /** Takes a reference; false if the last one is already gone. */
    public boolean retain() {
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

    /** Drops a reference; true for the caller that dropped the last one, which frees the resource. */
    public boolean release() {
        return refs.decrementAndGet() == 0;
    }
}
