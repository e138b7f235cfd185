package io.fastblock.gateway.qos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.meta.QosSpec;
import java.util.PriorityQueue;
import org.junit.jupiter.api.Test;

/** The throttle against a fake clock and a fake scheduler: exact rates, small bursts, live updates. */
class VolumeThrottleTest {
    static final long S = 1_000_000_000L;

    /** A fake clock with a queue of scheduled tasks run in time order. */
    static final class FakeTime implements VolumeThrottle.Scheduler {
        long now = 1_000 * S;
        private long seq;
        private final PriorityQueue<long[]> due = new PriorityQueue<>((a, b) -> a[0] != b[0]
                ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
        private final java.util.Map<Long, Runnable> tasks = new java.util.HashMap<>();

        @Override
        public void schedule(Runnable task, long delayNanos) {
            long id = seq++;
            due.add(new long[] {now + delayNanos, id});
            tasks.put(id, task);
        }

        /** Runs what is due up to {@code until}, moving the clock along. */
        void runUntil(long until) {
            while (!due.isEmpty() && due.peek()[0] <= until) {
                long[] next = due.poll();
                now = Math.max(now, next[0]);
                tasks.remove(next[1]).run();
            }
            now = until;
        }
    }

    static QosSpec iops(long total) {
        return new QosSpec(total, 0, 0, 0, 0, 0);
    }

    @Test
    void unlimitedNeverWaits() {
        FakeTime t = new FakeTime();
        VolumeThrottle v = new VolumeThrottle(() -> t.now, t);
        assertTrue(v.unlimited());
        for (int i = 0; i < 10_000; i++) {
            assertTrue(v.admit(true, 1 << 20).isDone());
        }
    }

    @Test
    void aBacklogIsAdmittedAtExactlyTheRateAfterASmallBurst() {
        FakeTime t = new FakeTime();
        VolumeThrottle v = new VolumeThrottle(() -> t.now, t);
        v.update(iops(500));
        long burst = 500 * VolumeThrottle.BURST_NANOS / S; // 10 commands
        long[] waits = new long[5000];
        for (int i = 0; i < waits.length; i++) {
            waits[i] = v.reserve(i % 2 == 0, 4096);
        }
        for (int i = 0; i <= burst; i++) {
            assertEquals(0, waits[i], "the bucket's " + burst + " commands (and the first) go at once: " + i);
        }
        for (int i = (int) burst + 1; i < waits.length; i++) {
            assertEquals((i - burst) * (S / 500), waits[i], 1, "command " + i + " waits its exact turn");
        }
    }

    /** A closed loop of 32 outstanding commands for 10 s, as an initiator keeps them: 500 IOPS to the command. */
    @Test
    void aClosedLoopGetsTheLimitWithinABucket() {
        FakeTime t = new FakeTime();
        VolumeThrottle v = new VolumeThrottle(() -> t.now, t);
        v.update(iops(500));
        long start = t.now;
        long end = start + 10 * S;
        long[] done = {0};
        Runnable[] issue = new Runnable[1];
        issue[0] = () -> v.admit(false, 4096).thenRun(() -> {
            done[0]++;
            if (t.now < end) {
                issue[0].run(); // the next command as this one completes (a zero-latency device)
            }
        });
        for (int i = 0; i < 32; i++) {
            issue[0].run();
        }
        t.runUntil(end);
        long burst = 500 * VolumeThrottle.BURST_NANOS / S;
        assertTrue(done[0] >= 5000 && done[0] <= 5000 + burst + 1, done[0] + " commands in 10 s at 500 IOPS");
    }

    @Test
    void directionLimitsApplyOnlyToTheirDirectionAndBytesLimitsCountBytes() {
        FakeTime t = new FakeTime();
        VolumeThrottle v = new VolumeThrottle(() -> t.now, t);
        v.update(new QosSpec(0, 100, 0, 0, 0, 0));
        for (int i = 0; i < 1000; i++) {
            assertEquals(0, v.reserve(false, 512), "writes are not limited by IOPS");
        }
        v.reserve(true, 0);
        v.reserve(true, 0); // one in the bucket (100 x 20 ms = 2 -> burst 2)
        v.reserve(true, 0);
        assertEquals(S / 100, v.reserve(true, 0), 1, "the fourth read waits one interval more");
        // write bytes: 1 MB/s, a bucket of 20 KB; 100 KB more waits 0.1 s per 100 KB beyond it
        FakeTime t2 = new FakeTime();
        VolumeThrottle w = new VolumeThrottle(() -> t2.now, t2);
        w.update(new QosSpec(0, 0, 0, 0, 0, 1_000_000));
        assertEquals(0, w.reserve(false, 100_000));
        assertEquals(100_000_000L - 20_000_000L, w.reserve(false, 100_000), 1_000, "100 KB at 1 MB/s, less the bucket");
        assertEquals(0, w.reserve(true, 10_000_000), "reads are not limited by a write limit");
    }

    @Test
    void newLimitsApplyFromTheirArrivalAndUnchangedOnesKeepTheirState() {
        FakeTime t = new FakeTime();
        VolumeThrottle v = new VolumeThrottle(() -> t.now, t);
        v.update(iops(10));
        for (int i = 0; i < 20; i++) {
            v.reserve(true, 0);
        }
        long backlog = v.reserve(true, 0);
        assertTrue(backlog > S, "a backlog of two seconds at 10 IOPS: " + backlog);
        v.update(iops(10)); // the same limit: the backlog stays
        assertTrue(v.reserve(true, 0) > backlog);
        v.update(iops(1000)); // a new limit: a new bucket from now
        assertEquals(0, v.reserve(true, 0));
        v.update(QosSpec.UNLIMITED);
        assertTrue(v.unlimited());
        assertTrue(v.admit(true, 0).isDone());
    }
}
