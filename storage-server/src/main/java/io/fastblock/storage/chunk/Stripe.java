package io.fastblock.storage.chunk;

import io.netty.util.concurrent.FastThreadLocalThread;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One of the chunk store's I/O stripes: a thread that runs the work of its chunks one task at a
 * time, in submission order, so a read never sees a write half applied and writes to a chunk
 * apply in the order they were ordered.
 *
 * <p>Every task runs holding the stripe's turn. {@link #tryHere} lets a caller run a short piece
 * of work on its own thread instead, holding the same turn, when nothing is queued or running on
 * the stripe: that is the order the stripe would have run it in, minus two thread switches (to the
 * stripe and back to the network thread), which cost a 4 KiB read more than the read itself on a
 * busy machine. The turn is not reentrant: work already on the stripe never runs more work inline.
 */
final class Stripe implements Executor {
    private final Semaphore turn = new Semaphore(1);
    /** Tasks submitted and not finished: a caller may only go first when there are none. */
    private final AtomicInteger pending = new AtomicInteger();
    private final ThreadPoolExecutor thread;

    Stripe(String name) {
        this.thread = new ThreadPoolExecutor(1, 1, 0L, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), r -> {
            // A Netty thread: it gets a buffer cache, so the read buffers it allocates come back
            // to it when the network loop releases them, instead of churning the pool's chunks.
            Thread t = new FastThreadLocalThread(r, name);
            t.setDaemon(true);
            return t;
        });
    }

    @Override
    public void execute(Runnable task) {
        pending.incrementAndGet();
        try {
            thread.execute(() -> {
                turn.acquireUninterruptibly();
                try {
                    task.run();
                } finally {
                    turn.release();
                    pending.decrementAndGet();
                }
            });
        } catch (RuntimeException rejected) {
            pending.decrementAndGet();
            throw rejected;
        }
    }

    /**
     * Runs {@code work} now on the calling thread if the stripe is idle (nothing queued or running),
     * completing the returned future as {@link CompletableFuture#supplyAsync} on the stripe would;
     * returns null, without running it, when the stripe is busy or shut down.
     */
    <T> CompletableFuture<T> tryHere(Callable<T> work) {
        if (pending.get() != 0 || thread.isShutdown() || !turn.tryAcquire()) {
            return null;
        }
        try {
            // A task submitted since the check waits for the turn: it came after this work.
            return CompletableFuture.completedFuture(work.call());
        } catch (Exception e) {
            RuntimeException failure = ChunkStore.uncheck(e);
            return CompletableFuture.failedFuture(failure instanceof CompletionException c ? c : new CompletionException(failure));
        } finally {
            turn.release();
        }
    }

    /** Nothing queued or running (tests: a task's future completes just before its turn is given back). */
    boolean idle() {
        return pending.get() == 0;
    }

    void shutdown() {
        thread.shutdown();
    }

    boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        return thread.awaitTermination(timeout, unit);
    }
}
