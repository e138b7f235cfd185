package io.fastblock.gateway.scsi;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.ThreadExecutorMap;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Merges small writes that continue one another and arrive in the same turn of an event loop into
 * one device write, so a sequential stream of small writes at a deep queue pays the chain's cost
 * per merged write instead of per command.
 *
 * <p>Why: each device write costs the replication chain the same messages, log append and index
 * update whatever its size up to the storage request limit. QEMU (libiscsi) sends a guest's or
 * {@code qemu-img}'s sequential 4 KiB writes one command each, 32 at a time; merged, they cost
 * about as much as a few 64 KiB writes (docs/performance.md).
 *
 * <p>Rules, which keep every property the commands had one by one:
 * <ul>
 *   <li>Only calls made on a Netty event loop are held, and only until the end of that loop's
 *       current turn (a task queued behind the turn's reads). Calls from other threads go
 *       straight to the device.</li>
 *   <li>One exception: a run that continues the loop's last merged write, while
 *       {@code holdWhileInFlight} of its merged writes are in flight, waits until one of those
 *       lands (or the run fills its window, or a write that does not continue it arrives). A
 *       sequential stream at a deep queue then sends fewer, larger writes instead of adding more
 *       to a chain that is already busy with it; a stream at a shallower queue, and random
 *       writes, are never held past their turn.</li>
 *   <li>A write joins the held run only when it starts where the run ends and stays inside the
 *       same aligned window of {@link BlockDevice#coalescedWriteBytes()} bytes, so a merged write
 *       never crosses a chunk or the storage request limit. Anything else first sends the held
 *       run, so writes reach the device in the order they came.</li>
 *   <li>Callers hold the range lock of their own blocks until their future completes, so held
 *       writes never overlap each other or anything else in flight on the LU.</li>
 *   <li>Each command completes when the merged write does, with its outcome (an error fails all of
 *       them, with the same sense). The merged write is durable as a whole, like any other.</li>
 * </ul>
 */
final class WriteCoalescer {
    /**
     * Merged writes of one loop in flight at which a continuing run waits for one to land. At 4,
     * qemu-img's 4 KiB QD32 sequential writes ran 4% faster over 10 alternating rounds (7 of 10
     * pairs; at 2, no clear difference from 4), and queues of 4 or less never wait (docs/performance.md).
     */
    static final int HOLD_WHILE_IN_FLIGHT = 4;

    private final BlockDevice device;
    private final int window;
    private final int holdWhileInFlight;
    /** The held run of each event loop that wrote to this LU; each is touched only by its own loop. */
    private final ConcurrentHashMap<EventExecutor, Turn> turns = new ConcurrentHashMap<>();

    WriteCoalescer(BlockDevice device) {
        this(device, HOLD_WHILE_IN_FLIGHT);
    }

    /** {@code holdWhileInFlight} 0: runs are never held past their turn. */
    WriteCoalescer(BlockDevice device, int holdWhileInFlight) {
        this.device = device;
        this.holdWhileInFlight = holdWhileInFlight;
        int w = device.coalescedWriteBytes();
        this.window = w > 0 && Integer.bitCount(w) == 1 && w >= device.blockSize() ? w : 0;
    }

    /** As {@link BlockDevice#write}: {@code data} stays the caller's and is read until the future completes. */
    CompletableFuture<Void> write(long offset, ByteBuf data) {
        EventExecutor loop = window == 0 ? null : ThreadExecutorMap.currentExecutor();
        if (loop == null) {
            return send(offset, data);
        }
        Turn turn = turns.computeIfAbsent(loop, Turn::new);
        if (data.readableBytes() >= window) {
            turn.sendHeld();
            return send(offset, data);
        }
        return turn.add(offset, data);
    }

    private CompletableFuture<Void> send(long offset, ByteBuf data) {
        try {
            return device.write(offset, data);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private record Held(ByteBuf data, CompletableFuture<Void> done) {
    }

    /** One loop's run of writes held until the end of its turn. */
    private final class Turn implements Runnable {
        private final EventExecutor loop;
        private List<Held> run = new ArrayList<>();
        private long start;
        private long end;
        private boolean queued;
        /** Merged writes sent from this turn and not yet landed, and where the last one ended. */
        private int inFlight;
        private long sentEnd = -1;
        /** The run waits for a write in flight to land ({@link #landed}). */
        private boolean waiting;
        private final Runnable land = this::landed;

        Turn(EventExecutor loop) {
            this.loop = loop;
        }

        CompletableFuture<Void> add(long offset, ByteBuf data) {
            long last = offset + data.readableBytes() - 1;
            if (!run.isEmpty() && (offset != end || last / window != start / window)) {
                sendHeld();
            }
            if (run.isEmpty()) {
                start = offset;
            }
            end = last + 1;
            CompletableFuture<Void> done = new CompletableFuture<>();
            run.add(new Held(data, done));
            if (!queued) {
                queued = true;
                try {
                    loop.execute(this);
                } catch (java.util.concurrent.RejectedExecutionException loopStopping) {
                    queued = false;
                    sendHeld(); // no end of turn will come: send now rather than strand the run
                }
            }
            return done;
        }

        @Override
        public void run() {
            queued = false;
            if (holdWhileInFlight > 0 && inFlight >= holdWhileInFlight && start == sentEnd && end % window != 0) {
                waiting = true;
                return;
            }
            sendHeld();
        }

        /** A merged write of this turn landed (on the loop). */
        void landed() {
            inFlight--;
            if (waiting && inFlight < holdWhileInFlight) {
                sendHeld();
            }
        }

        void sendHeld() {
            waiting = false;
            if (run.isEmpty()) {
                return;
            }
            List<Held> writes = run;
            run = new ArrayList<>(Math.max(4, writes.size()));
            if (holdWhileInFlight > 0) {
                inFlight++;
                sentEnd = end;
            }
            if (writes.size() == 1) {
                relay(send(start, writes.get(0).data()), writes, null);
                return;
            }
            CompositeByteBuf merged = writes.get(0).data().alloc().compositeDirectBuffer(writes.size());
            for (Held h : writes) {
                merged.addComponent(true, h.data().retainedSlice());
            }
            relay(send(start, merged), writes, merged);
        }

        /** Completes each held command with the sent write's outcome, then counts the write as landed. */
        private void relay(CompletableFuture<Void> sent, List<Held> writes, ByteBuf merged) {
            sent.whenComplete((v, err) -> {
                if (merged != null) {
                    merged.release();
                }
                for (Held h : writes) {
                    if (err == null) {
                        h.done().complete(null);
                    } else {
                        h.done().completeExceptionally(err);
                    }
                }
                if (holdWhileInFlight == 0) {
                    return;
                }
                if (loop.inEventLoop()) {
                    landed();
                    return;
                }
                try {
                    loop.execute(land);
                } catch (java.util.concurrent.RejectedExecutionException loopStopping) {
                    landed(); // the loop runs no more tasks: a waiting run must not be stranded
                }
            });
        }
    }
}
