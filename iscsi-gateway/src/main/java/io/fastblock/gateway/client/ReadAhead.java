package io.fastblock.gateway.client;

import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;

/**
 * Read-ahead for one open volume's small sequential reads. A stream of small reads that the
 * {@link StreamClassifier} calls sequential pays a storage round trip per read (gateway to the
 * middle replica and back) where a target with a local page cache pays none; this reads the next
 * window of the stream in one storage request and answers the stream's next reads from it.
 *
 * <p>Coherence: every mutation this gateway makes to the volume drops the windows it overlaps when
 * it completes ({@link #invalidate}), those read before it and those read while it was out alike;
 * a window dropped while its read is out is thrown away when it lands.
 * Writes by another gateway are not seen here. A window is therefore served only for
 * {@code maxAgeNanos} after its read was sent, the volume's write lease moving drops them all, and
 * fastblock volumes are not multi-attach (the Cinder driver reports {@code multiattach} false). Layer
 * changes (a revert) also drop them ({@link #clear}).
 *
 * <p>Memory: at most {@code maxWindows} windows of {@code windowBytes} each, and no more than the
 * gateway-wide {@link Budget} leaves; a window the stream has read to its end is released at once.
 */
final class ReadAhead {
    /** Reads a window through the volume's normal read path (chunk split, routing, retries). */
    @FunctionalInterface
    interface Fetcher {
        CompletableFuture<ByteBuf> fetch(long offset, int length);
    }

    private static final class Window {
        final long start;
        final int length;
        final long sentAt;
        /** Completes (never exceptionally) once the window's read has landed or failed. */
        final CompletableFuture<Void> landed = new CompletableFuture<>();
        /** The window's buffer once landed; released when the window is dropped. */
        ByteBuf data;
        boolean dropped;
        boolean nextStarted;

        Window(long start, int length, long sentAt) {
            this.start = start;
            this.length = length;
            this.sentAt = sentAt;
        }

        long end() {
            return start + length;
        }

        boolean covers(long offset, int len) {
            return offset >= start && offset + len <= end();
        }
    }

    private final int windowBytes;
    private final int maxWindows;
    private final long maxAgeNanos;
    private final int triggersBelow;
    private final LongSupplier volumeSize;
    private final Fetcher fetcher;
    private final LongSupplier clock;
    private final Budget budget;
    /** Oldest first. */
    private final List<Window> windows = new ArrayList<>();
    /** {@code windows.size()}, readable without the monitor. */
    private volatile int held;
    private long hits;

    /**
     * @param windowBytes  bytes read ahead per storage request
     * @param maxWindows   windows held at once (across the volume's streams)
     * @param maxAgeNanos  how long after its read was sent a window may answer reads
     * @param budget       the gateway's read-ahead memory, shared by every open volume
     * @param volumeSize   the volume's current size; windows end there
     * @param fetcher      reads a window
     */
    ReadAhead(int windowBytes, int maxWindows, long maxAgeNanos, Budget budget, LongSupplier volumeSize,
              Fetcher fetcher) {
        this(windowBytes, maxWindows, maxAgeNanos, budget, volumeSize, fetcher, System::nanoTime);
    }

    ReadAhead(int windowBytes, int maxWindows, long maxAgeNanos, Budget budget, LongSupplier volumeSize,
              Fetcher fetcher, LongSupplier nanoClock) {
        if (windowBytes < 4096) {
            throw new IllegalArgumentException("read-ahead window must be at least 4096 bytes, got " + windowBytes);
        }
        if (maxWindows < 1 || maxAgeNanos <= 0) {
            throw new IllegalArgumentException("need at least one window and a positive age, got " + maxWindows
                    + " and " + maxAgeNanos + " ns");
        }
        this.windowBytes = windowBytes;
        this.maxWindows = maxWindows;
        this.maxAgeNanos = maxAgeNanos;
        // Reads of a quarter window or more are few per window: their own round trips cost little.
        this.triggersBelow = windowBytes / 4;
        this.volumeSize = volumeSize;
        this.fetcher = fetcher;
        this.clock = nanoClock;
        this.budget = budget;
    }

    /**
     * A read: answered from a window when one holds all of it (a slice the caller releases, possibly
     * after the window's read lands), else null and the caller reads as usual. A sequential read
     * also starts the stream's next window when none holds what follows it, and a read past the
     * middle of a window starts the one after it.
     */
    CompletableFuture<ByteBuf> read(long offset, int length, boolean sequential) {
        if (!sequential && held == 0) {
            // A random read of a volume with no stream running: nothing to find, nothing to start.
            return null;
        }
        long now = clock.getAsLong();
        Window started = null;
        Window pending = null;
        CompletableFuture<ByteBuf> answer = null;
        synchronized (this) {
            expire(now);
            Window hit = find(offset, length);
            if (hit == null) {
                if (sequential && length < triggersBelow) {
                    started = startAt(offset + length, now);
                }
            } else {
                if (hit.data != null) {
                    hits++;
                    answer = CompletableFuture.completedFuture(
                            hit.data.retainedSlice((int) (offset - hit.start), length));
                } else {
                    pending = hit;
                }
                if (offset + length - hit.start >= hit.length / 2 && !hit.nextStarted) {
                    hit.nextStarted = true;
                    started = startAt(hit.end(), now);
                }
                if (answer != null && offset + length == hit.end()) {
                    // The stream has read this window to its end and moves on: its memory goes back now.
                    drop(hit);
                }
            }
        }
        if (started != null) {
            send(started);
        }
        if (pending == null) {
            return answer;
        }
        // The window's read is still out: answer when it lands, or read directly if it was dropped.
        Window w = pending;
        return w.landed.thenCompose(ignored -> {
            synchronized (this) {
                if (!w.dropped && w.data != null) {
                    hits++;
                    return CompletableFuture.completedFuture(w.data.retainedSlice((int) (offset - w.start), length));
                }
            }
            return fetcher.fetch(offset, length);
        });
    }

    /**
     * A new window at {@code start}, or null when one already holds that byte or the volume ends
     * there; the oldest windows make room. Under the monitor; the caller sends it after leaving.
     */
    private Window startAt(long start, long now) {
        long size = volumeSize.getAsLong();
        if (start >= size || find(start, 1) != null) {
            return null;
        }
        while (windows.size() >= maxWindows) {
            drop(windows.get(0));
        }
        int length = (int) Math.min(windowBytes, size - start);
        if (!budget.take(length)) {
            // The gateway's read-ahead memory is all in use: this stream reads as if there were none.
            return null;
        }
        Window w = new Window(start, length, now);
        windows.add(w);
        held = windows.size();
        return w;
    }

    /** Sends a window's read outside the monitor: the fetcher may answer at once (zeros of an unallocated chunk). */
    private void send(Window w) {
        CompletableFuture<ByteBuf> read;
        try {
            read = fetcher.fetch(w.start, w.length);
        } catch (RuntimeException e) {
            read = CompletableFuture.failedFuture(e);
        }
        read.whenComplete((buf, err) -> {
            synchronized (this) {
                if (err == null && !w.dropped) {
                    w.data = buf;
                } else {
                    if (buf != null) {
                        buf.release();
                    }
                    drop(w);
                }
            }
            w.landed.complete(null);
        });
    }

    private Window find(long offset, int length) {
        for (int i = windows.size() - 1; i >= 0; i--) {
            Window w = windows.get(i);
            if (w.covers(offset, length)) {
                return w;
            }
        }
        return null;
    }

    private void expire(long now) {
        for (int i = windows.size() - 1; i >= 0; i--) {
            Window w = windows.get(i);
            if (now - w.sentAt > maxAgeNanos) {
                drop(w);
            }
        }
    }

    private void drop(Window w) {
        if (w.dropped) {
            return;
        }
        budget.give(w.length);
        windows.remove(w);
        held = windows.size();
        w.dropped = true;
        if (w.data != null) {
            w.data.release();
            w.data = null;
        }
    }

    /** Drops every window overlapping [offset, offset + length): this gateway changed those bytes. */
    void invalidate(long offset, long length) {
        if (held == 0) {
            // Every write passes here: without a window there is nothing to drop, and a window started
            // after this read of held is read after the write completed.
            return;
        }
        synchronized (this) {
            for (int i = windows.size() - 1; i >= 0; i--) {
                Window w = windows.get(i);
                if (w.start < offset + length && offset < w.end()) {
                    drop(w);
                }
            }
        }
    }

    /** Drops windows older than their age limit (a periodic sweep of an idle volume). */
    synchronized void expire() {
        expire(clock.getAsLong());
    }

    /** Drops every window. */
    synchronized void clear() {
        while (!windows.isEmpty()) {
            drop(windows.get(0));
        }
    }

    /** Windows held or being read; for tests. */
    synchronized int windows() {
        return windows.size();
    }

    /** Reads answered from a window so far. */
    synchronized long hits() {
        return hits;
    }

    /**
     * Bytes of read-ahead windows all open volumes may hold at once, so a gateway with many
     * sequential streams does not hold a window set for each without limit. A window that does not
     * fit is not started.
     */
    static final class Budget {
        private final java.util.concurrent.atomic.AtomicLong left;

        Budget(long bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException("read-ahead budget must be >= 0, got " + bytes);
            }
            left = new java.util.concurrent.atomic.AtomicLong(bytes);
        }

        boolean take(int bytes) {
            long now;
            do {
                now = left.get();
                if (now < bytes) {
                    return false;
                }
            } while (!left.compareAndSet(now, now - bytes));
            return true;
        }

        void give(int bytes) {
            left.addAndGet(bytes);
        }

        long left() {
            return left.get();
        }
    }
}
