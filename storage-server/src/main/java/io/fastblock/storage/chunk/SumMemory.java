package io.fastblock.storage.chunk;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The heap that the chunks' in-memory checksums ({@link BlockSums}) may hold together. A random
 * write load over many chunks would otherwise hold 64 KiB per 64 MiB chunk it touched until the
 * next checkpoint; past the limit a chunk's checksums are written through to its sidecar instead,
 * one {@code pwrite} per write as before, so the limit costs speed, never memory.
 */
final class SumMemory {
    /** No limit (tests that open chunk files directly). */
    static final SumMemory UNLIMITED = new SumMemory(Long.MAX_VALUE);

    private final long limit;
    private final AtomicLong held = new AtomicLong();

    SumMemory(long limit) {
        this.limit = limit;
    }

    /** An eighth of the JVM's heap: 32 MiB, 512 whole 64 MiB chunks, with the local cluster's 256 MiB. */
    static SumMemory ofHeap() {
        return new SumMemory(Runtime.getRuntime().maxMemory() / 8);
    }

    /** Takes {@code bytes} if they fit under the limit. */
    boolean take(long bytes) {
        return takeWithin(bytes, limit);
    }

    /**
     * Takes {@code bytes} for a copy held only to serve reads, if the total stays within half the
     * limit: reads of many chunks can never leave the chunks being written without room.
     */
    boolean takeForReads(long bytes) {
        return takeWithin(bytes, limit / 2);
    }

    private boolean takeWithin(long bytes, long ceiling) {
        while (true) {
            long now = held.get();
            if (now + bytes > ceiling) {
                return false;
            }
            if (held.compareAndSet(now, now + bytes)) {
                return true;
            }
        }
    }

    void give(long bytes) {
        held.addAndGet(-bytes);
    }

    long held() {
        return held.get();
    }

    long limit() {
        return limit;
    }
}
