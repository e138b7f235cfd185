package io.fastblock.gateway.scsi;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Asynchronous exclusive locks on block ranges of one logical unit. Every write through this
 * gateway holds the lock on its range while it runs, so COMPARE AND WRITE and ORWRITE (read,
 * check, write) are atomic against them. Waiters are granted in arrival order among overlapping
 * ranges; non-overlapping ranges never wait for each other. Nothing blocks a thread.
 */
public final class LbaRangeLocks {
    /** A held range; {@link #release()} exactly once. */
    public final class Held {
        final long first;
        final long end;

        private Held(long first, long end) {
            this.first = first;
            this.end = end;
        }

        public void release() {
            LbaRangeLocks.this.release(this);
        }
    }

    private record Waiter(long first, long end, CompletableFuture<Held> grant) {
    }

    private final List<Held> held = new ArrayList<>();
    private final List<Waiter> waiting = new ArrayList<>();

    /** Completes (possibly at once, possibly on the releasing thread) when [lba, lba+count) is ours. */
    public CompletableFuture<Held> lock(long lba, long count) {
        long end = lba + Math.max(count, 1);
        CompletableFuture<Held> f = new CompletableFuture<>();
        Held h;
        synchronized (this) {
            h = grantIfFree(lba, end);
            if (h == null) {
                waiting.add(new Waiter(lba, end, f));
                return f;
            }
        }
        f.complete(h);
        return f;
    }

    /**
     * [lba, lba+count) at once when nothing holds or waits for an overlapping range (every write
     * of a workload without overlaps), else null: then {@link #lock} queues it. Spares the future.
     */
    public synchronized Held tryLock(long lba, long count) {
        return grantIfFree(lba, lba + Math.max(count, 1));
    }

    /** The range, now held, if nothing holds or waits for an overlapping one; else null. Under the monitor. */
    private Held grantIfFree(long first, long end) {
        if (overlapsHeld(first, end) || overlapsWaiting(first, end, waiting.size())) {
            return null;
        }
        Held h = new Held(first, end);
        held.add(h);
        return h;
    }

    private boolean overlapsHeld(long first, long end) {
        for (Held h : held) {
            if (first < h.end && h.first < end) {
                return true;
            }
        }
        return false;
    }

    private boolean overlapsWaiting(long first, long end, int before) {
        for (int i = 0; i < before; i++) {
            Waiter w = waiting.get(i);
            if (first < w.end && w.first < end) {
                return true;
            }
        }
        return false;
    }

    private void release(Held h) {
        List<CompletableFuture<Held>> grants;
        List<Held> granted;
        synchronized (this) {
            if (!held.remove(h)) {
                throw new IllegalStateException("range released twice");
            }
            if (waiting.isEmpty()) {
                return; // the common case: nobody to grant, nothing to allocate
            }
            grants = new ArrayList<>();
            granted = new ArrayList<>();
            int i = 0;
            for (Iterator<Waiter> it = waiting.iterator(); it.hasNext(); i++) {
                Waiter w = it.next();
                if (!overlapsHeld(w.first, w.end) && !overlapsWaiting(w.first, w.end, i)) {
                    Held g = new Held(w.first, w.end);
                    held.add(g);
                    grants.add(w.grant);
                    granted.add(g);
                    it.remove();
                    i--;
                }
            }
        }
        for (int k = 0; k < grants.size(); k++) {
            grants.get(k).complete(granted.get(k));
        }
    }

    synchronized int heldCount() {
        return held.size();
    }
}
