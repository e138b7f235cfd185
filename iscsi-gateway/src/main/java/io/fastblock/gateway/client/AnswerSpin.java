package io.fastblock.gateway.client;

import io.netty.channel.SelectStrategy;
import io.netty.channel.SelectStrategyFactory;
import io.netty.util.IntSupplier;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.FastThreadLocal;
import io.netty.util.concurrent.SingleThreadEventExecutor;
import io.netty.util.internal.ThreadExecutorMap;
import java.util.function.LongSupplier;

/**
 * How an iSCSI event loop waits when all it has to do is wait for one or two storage answers: it
 * polls its sockets (epoll with no timeout) for a short while before it goes to sleep. At queue
 * depth 1 a 4 KiB read is answered by the storage server within a few tens of microseconds, and a
 * loop that slept meanwhile must be woken up for the answer: on a virtual machine waking a parked
 * thread on an idle CPU costs 10-40 µs, a good part of the whole read. With more answers awaited
 * (deeper queues) the loop is seldom idle and never polls; nor does it when it has tasks to run,
 * and it stops polling as soon as a task is queued. The price is the CPU the poll spends, bounded
 * by {@code spinNanos} per idle period: paid only while at most {@code maxAwaited} answers are out.
 *
 * <p>How long one poll lasts adapts to how long answers take on this machine: it starts at
 * {@link #START_NANOS} (or {@code spinNanos} if that is less), doubles after a poll that found
 * nothing, grows to twice an answer's wait at once and shrinks by 1/16 per quicker answer, never
 * below the start nor above {@code spinNanos}. Why: a fixed 50 µs poll fits a machine where a
 * read's round trip takes 30-40 µs; on a slower one (the thirtieth run's VM, ~100 µs) every poll
 * missed, the back-off put the loop to sleep and each answer paid the wake-up again. Measured
 * there (two clusters, 8 s QD1 4 KiB random reads, alternating): a fixed 150 µs poll gave a lower
 * p50 than 50 µs in 12 of 12 pairs (means 124 against 144 µs); this adaptive one in 5 of 6 with one
 * tie (137 against 150 µs), for 91-97 against 70-71 µs of the gateway's CPU per read
 * (docs/performance.md).
 *
 * <p>The loop also counts the initiators' commands it executes: it polls only while at most
 * {@code maxAwaited} of those are out too. A client's queue can be deep while few storage
 * requests are out: the gateway merges a stream's sequential writes into a few larger ones, so
 * qemu-img's 32 queued 4 KiB writes kept one or two answers awaited and the loop polled through
 * them, 4 epoll calls per write, for 1.5-2 µs of the gateway's CPU per write (two warm clusters,
 * 8 alternating pairs of 100 000 writes; the rate's gain, median 5%, was within the noise). At
 * that depth something else wakes the loop soon anyway.
 *
 * <p>The counts are per event loop thread, kept by the {@link StorageConnection}s living on that
 * loop ({@link #awaiting} and {@link #answered}) and by the iSCSI connections on it
 * ({@link #commandStarted} and {@link #commandEnded}), on the loop only.
 */
public final class AnswerSpin implements SelectStrategy {
    /** Default bound of one poll: a few 4 KiB reads' round trips to a storage server on a slow machine. */
    public static final long DEFAULT_SPIN_NANOS = 200_000;
    /** The first poll's length, and the shortest: about a 4 KiB read's round trip on a fast machine. */
    static final long START_NANOS = 50_000;
    /** After an answer that came in less than half the poll, the next poll is 1/16 shorter. */
    static final int SHRINK_SHIFT = 4;
    /** Polls only while this many answers or fewer are awaited: latency matters at low queue depth. */
    public static final int DEFAULT_MAX_AWAITED = 2;

    /** Most idle periods skipped after polls that found nothing (a loaded machine answers late). */
    static final int MAX_BACKOFF = 64;

    /**
     * Per loop thread: [0] answers awaited, [1] idle periods still to skip, [2] skips after the next
     * miss, [3] the next poll's length in nanoseconds (0: not set yet), [4] initiators' commands
     * executing.
     */
    private static final FastThreadLocal<int[]> STATE = new FastThreadLocal<>() {
        @Override
        protected int[] initialValue() {
            return new int[] {0, 0, 1, 0, 0};
        }
    };

    private final long spinNanos;
    private final int maxAwaited;
    private final LongSupplier clock;

    AnswerSpin(long spinNanos, int maxAwaited, LongSupplier clock) {
        if (spinNanos < 0 || maxAwaited < 0) {
            throw new IllegalArgumentException("spin " + spinNanos + " ns, max awaited " + maxAwaited + ": must be >= 0");
        }
        this.spinNanos = spinNanos;
        this.maxAwaited = maxAwaited;
        this.clock = clock;
    }

    /** A factory for the iSCSI worker loops; {@code spinNanos} 0 turns polling off (Netty's default strategy). */
    public static SelectStrategyFactory factory(long spinNanos, int maxAwaited) {
        AnswerSpin shared = new AnswerSpin(spinNanos, maxAwaited, System::nanoTime); // stateless: one for all loops
        return () -> shared;
    }

    /** A request was sent from this thread's loop; its answer is now awaited. */
    static void awaiting() {
        STATE.get()[0]++;
    }

    /** An awaited answer came, failed or timed out (once per {@link #awaiting}, on the same thread). */
    static void answered() {
        STATE.get()[0]--;
    }

    /** An initiator's command started executing on this thread's loop. */
    public static void commandStarted() {
        STATE.get()[4]++;
    }

    /** A command counted by {@link #commandStarted} ended (once for each, on the same thread). */
    public static void commandEnded() {
        STATE.get()[4]--;
    }

    /** Commands executing on the calling thread's loop. */
    public static int commands() {
        return STATE.get()[4];
    }

    /** Forgets the calling thread's counts and back-off (tests run on one thread one after another). */
    static void forgetThreadState() {
        STATE.remove();
    }

    /** Answers awaited by the calling thread's loop. */
    static int awaited() {
        return STATE.get()[0];
    }

    @Override
    public int calculateStrategy(IntSupplier selectNow, boolean hasTasks) throws Exception {
        if (hasTasks) {
            return selectNow.get(); // as Netty's default: look at the sockets, then run the tasks
        }
        int[] state = STATE.get();
        int out = state[0];
        if (spinNanos == 0 || out == 0 || out > maxAwaited || state[4] > maxAwaited) {
            return SelectStrategy.SELECT;
        }
        if (state[1] > 0) {
            state[1]--; // backing off after polls that found nothing
            return SelectStrategy.SELECT;
        }
        EventExecutor loop = ThreadExecutorMap.currentExecutor();
        long shortest = Math.min(spinNanos, START_NANOS);
        long window = state[3] == 0 ? shortest : state[3];
        long start = clock.getAsLong();
        long deadline = start + window;
        do {
            int ready = selectNow.get();
            if (ready > 0) {
                state[2] = 1;
                // Longer at once when this answer took longer; shorter only slowly, since one quick
                // answer says little about the next and a miss costs the wake-up the poll is for.
                long waited = clock.getAsLong() - start;
                long next = Math.max(2 * waited, window - (window >> SHRINK_SHIFT));
                state[3] = (int) Math.max(shortest, Math.min(spinNanos, next));
                return ready;
            }
            if (loop instanceof SingleThreadEventExecutor s && s.pendingTasks() > 0) {
                return 0; // run the task that came meanwhile (0: no ready sockets, then the tasks)
            }
            Thread.onSpinWait();
        } while (clock.getAsLong() - deadline < 0);
        // Nothing came in time: the answers are slow now (a busy machine, a long request), so the
        // poll only costs CPU others need. Sleep through the next idle periods, more after each miss;
        // the next poll is longer, up to the bound, in case this machine's answers just take longer.
        state[3] = (int) Math.min(spinNanos, 2 * window);
        state[1] = state[2];
        state[2] = Math.min(MAX_BACKOFF, state[2] * 2);
        return SelectStrategy.SELECT;
    }
}
