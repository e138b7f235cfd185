package io.fastblock.gateway.iscsi.session;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * The command data all sessions of a gateway may hold at once: the data-out of writes the gateway
 * solicits with R2T, and the data-in of reads on their way back to the initiator. The CmdSN window
 * bounds each session (depth commands of up to {@code MAX_TRANSFER_BYTES} each); this bounds their
 * sum against the gateway's direct memory, however many sessions there are.
 *
 * <p>A command claims its whole transfer once, when it is delivered, before the gateway sends its
 * first R2T or asks the device for its reads; it gives the bytes back when they are gone (a write
 * when the device has it, a read when its Data-In left). A claim that does not fit waits its turn:
 * claims are granted strictly in arrival order, so a large command is not starved by a stream of
 * small ones, and one larger than the whole budget is granted alone. Since a waiting command holds
 * nothing and a granted one needs nothing more to finish, waiting cannot deadlock.
 *
 * <p>Immediate and unsolicited data arrive before the command is delivered and cannot be refused;
 * the CmdSN window bounds them (FirstBurstLength per open slot). So while the budget is
 * {@link #pressed}, sessions keep the slots of answered commands closed instead of reopening them,
 * and reopen them (telling the initiator with a NOP-In) once there is room again: under sustained
 * pressure every session's window narrows, and with it the data that can arrive unasked.
 *
 * <p>Thread-safe; a grant runs on the executor its claim named (the connection's event loop).
 */
public final class DataBudget {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(DataBudget.class);
    /** At most one warning per this interval that commands wait for memory, so an operator sees it without a flood. */
    static final long WARN_EVERY_NANOS = 60_000_000_000L;
    private final long limit;
    private long lastWarnNanos = System.nanoTime() - WARN_EVERY_NANOS;
    private long waitedAtLastWarn;
    private int warnings;
    private long used;
    /** {@link #pressed}, kept up to date under the lock so every command's answer can read it without taking it. */
    private volatile boolean pressed;
    private final ArrayDeque<Claim> waiting = new ArrayDeque<>();
    private long waited;
    /** One-shot callbacks for when the budget is no longer {@link #pressed}. */
    private final List<RoomWatcher> roomWatchers = new ArrayList<>();

    private record RoomWatcher(Executor executor, Runnable action) {
    }

    public DataBudget(long limit) {
        if (limit <= 0) {
            throw new IllegalArgumentException("data budget must be positive, got " + limit);
        }
        this.limit = limit;
    }

    /** A claim on {@code bytes} of the budget: granted at once, or queued until others give theirs back. */
    public final class Claim {
        final long bytes;
        private final Executor executor;
        private final Runnable granted;
        private boolean holding;
        private boolean done;
        /** Set by {@link #claim} on the claiming thread only. */
        private boolean atOnce;

        private Claim(long bytes, Executor executor, Runnable granted) {
            this.bytes = bytes;
            this.executor = executor;
            this.granted = granted;
        }

        /** True once the bytes are this claim's (the grant callback runs, or ran, after this turns true). */
        public boolean granted() {
            synchronized (DataBudget.this) {
                return holding;
            }
        }

        /** Granted inside {@link DataBudget#claim}: its callback never runs. Read on the claiming thread. */
        public boolean grantedAtOnce() {
            return atOnce;
        }

        /** Gives the bytes back, or leaves the queue if not granted yet. Idempotent. */
        public void release() {
            List<Claim> next;
            List<RoomWatcher> room;
            synchronized (DataBudget.this) {
                if (done) {
                    return;
                }
                done = true;
                if (holding) {
                    holding = false;
                    used -= bytes;
                } else {
                    waiting.remove(this);
                }
                next = grantWaiting();
                room = takeRoomWatchers();
            }
            notifyGranted(next);
            notifyRoom(room);
        }
    }

    /**
     * Claims {@code bytes}. Returns the claim already granted when it fits and nobody waits
     * ({@link Claim#grantedAtOnce}; {@code granted} is then not run); otherwise queues it and runs {@code granted} on
     * {@code executor} once it is.
     */
    public Claim claim(long bytes, Executor executor, Runnable granted) {
        if (bytes < 0) {
            throw new IllegalArgumentException("negative claim " + bytes);
        }
        Claim c = new Claim(bytes, executor, granted);
        String warning;
        synchronized (this) {
            if (waiting.isEmpty() && fits(bytes)) {
                c.holding = true;
                c.atOnce = true;
                used += bytes;
                updatePressed();
                return c;
            }
            waiting.add(c);
            waited++;
            updatePressed();
            long now = System.nanoTime();
            if (now - lastWarnNanos < WARN_EVERY_NANOS) {
                return c;
            }
            lastWarnNanos = now;
            warning = String.format("commands wait for memory: the data budget of %d MiB is spent (%d MiB held, "
                    + "%d waiting, %d waited since the last warning); raise --data-memory (and the gateway's direct "
                    + "memory) if this gateway should carry more", limit >> 20, used >> 20, waiting.size(),
                    waited - waitedAtLastWarn);
            waitedAtLastWarn = waited;
            warnings++;
        }
        LOG.warn(warning);
        return c;
    }

    private boolean fits(long bytes) {
        // One claim larger than the whole budget is let through alone, or it would wait for ever.
        return used + bytes <= limit || used == 0;
    }

    /** Under the lock, after every change of {@code used} or {@code waiting}. */
    private void updatePressed() {
        pressed = !waiting.isEmpty() || used >= limit;
    }

    /** Under the lock: grants queued claims in order while the head fits. */
    private List<Claim> grantWaiting() {
        List<Claim> out = null;
        Claim head;
        while ((head = waiting.peekFirst()) != null && fits(head.bytes)) {
            waiting.pollFirst();
            head.holding = true;
            used += head.bytes;
            if (out == null) {
                out = new ArrayList<>(2);
            }
            out.add(head);
        }
        updatePressed();
        return out;
    }

    private static void notifyGranted(List<Claim> granted) {
        if (granted == null) {
            return;
        }
        for (Claim c : granted) {
            try {
                c.executor.execute(c.granted);
            } catch (RejectedExecutionException loopGone) {
                // The connection's loop is shutting down with the gateway: nobody will use the bytes.
                c.release();
            }
        }
    }

    /**
     * All of the budget is held, or claims wait: sessions should stop taking more commands (their
     * answered commands do not reopen the CmdSN window until {@link #whenRoom}).
     */
    public boolean pressed() {
        return pressed;
    }

    /** Runs {@code action} on {@code executor} once the budget is not {@link #pressed} (soon, if it is not now). */
    public void whenRoom(Executor executor, Runnable action) {
        List<RoomWatcher> room;
        synchronized (this) {
            roomWatchers.add(new RoomWatcher(executor, action));
            room = takeRoomWatchers();
        }
        notifyRoom(room);
    }

    /** Under the lock: the watchers to run now, if the budget is not pressed (they are one-shot). */
    private List<RoomWatcher> takeRoomWatchers() {
        if (roomWatchers.isEmpty() || pressed) {
            return null;
        }
        List<RoomWatcher> ready = new ArrayList<>(roomWatchers);
        roomWatchers.clear();
        return ready;
    }

    private static void notifyRoom(List<RoomWatcher> ready) {
        if (ready == null) {
            return;
        }
        for (RoomWatcher w : ready) {
            try {
                w.executor().execute(w.action());
            } catch (RejectedExecutionException loopGone) {
                // The session's loop is gone with the gateway: nothing to reopen.
            }
        }
    }

    public long limit() {
        return limit;
    }

    /** Bytes held by granted claims now. */
    public synchronized long used() {
        return used;
    }

    /** Claims waiting for room now. */
    public synchronized int waiting() {
        return waiting.size();
    }

    /** Warnings logged that commands wait for memory (at most one per {@link #WARN_EVERY_NANOS}). */
    synchronized int warnings() {
        return warnings;
    }

    /** Claims that had to wait, since start. */
    public synchronized long waited() {
        return waited;
    }
}
