package io.fastblock.storage.chain;

import java.util.ArrayDeque;
import java.util.Collection;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * A group's sent list (chain replication's {@code Sent_i}): writes forwarded downstream and not
 * yet acknowledged, in the order they were admitted. Bounded in entries and bytes: admission
 * first {@link #reserve reserves} room and waits (asynchronously, first come first served) while
 * the list is full, so a stalled successor stops this replica from taking more writes instead of
 * letting memory grow. Not thread-safe: used under the group's lock; waiters are woken on
 * {@code wakeup} so their continuations never run under that lock.
 */
final class SentList {
    private record Waiter(int bytes, CompletableFuture<Void> ready) {
    }

    private final int maxWrites;
    private final long maxBytes;
    private final Executor wakeup;
    private final TreeMap<Long, SentWrite> entries = new TreeMap<>();
    private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();
    private long nextOrder;
    private int reservedWrites;
    private long reservedBytes;

    SentList(int maxWrites, long maxBytes, Executor wakeup) {
        if (maxWrites < 1 || maxBytes < 1) {
            throw new IllegalArgumentException("sent list bounds must be positive: " + maxWrites + " writes, " + maxBytes + " bytes");
        }
        this.maxWrites = maxWrites;
        this.maxBytes = maxBytes;
        this.wakeup = wakeup;
    }

    private boolean fits(int bytes) {
        // One write larger than the byte bound still goes through alone, or it could never be sent.
        return reservedWrites < maxWrites && (reservedBytes + bytes <= maxBytes || reservedWrites == 0);
    }

    /** Completes when room for one write of {@code bytes} is reserved; call {@link #add} or {@link #unreserve} after. */
    CompletableFuture<Void> reserve(int bytes) {
        if (waiters.isEmpty() && fits(bytes)) {
            reservedWrites++;
            reservedBytes += bytes;
            return CompletableFuture.completedFuture(null);
        }
        Waiter w = new Waiter(bytes, new CompletableFuture<>());
        waiters.add(w);
        return w.ready;
    }

    boolean wouldWait(int bytes) {
        return !waiters.isEmpty() || !fits(bytes);
    }

    void unreserve(int bytes) {
        reservedWrites--;
        reservedBytes -= bytes;
        wake();
    }

    long nextOrder() {
        return nextOrder++;
    }

    /** Adds an entry whose room was reserved. */
    void add(SentWrite w) {
        entries.put(w.order, w);
    }

    void remove(SentWrite w) {
        if (entries.remove(w.order) != null) {
            unreserve(w.bytes);
        }
    }

    private void wake() {
        while (!waiters.isEmpty() && fits(waiters.peek().bytes)) {
            Waiter w = waiters.poll();
            reservedWrites++;
            reservedBytes += w.bytes;
            wakeup.execute(() -> w.ready.complete(null));
        }
    }

    /** Entries in admission order (a live view: copy before changing the list while iterating). */
    Collection<SentWrite> inOrder() {
        return entries.values();
    }

    int size() {
        return entries.size();
    }

    long bytes() {
        long b = 0;
        for (SentWrite w : entries.values()) {
            b += w.bytes;
        }
        return b;
    }

    int waiting() {
        return waiters.size();
    }
}
