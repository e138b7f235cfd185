package io.fastblock.gateway.iscsi.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class DataBudgetTest {
    /** Runs callbacks where the test can see them. */
    static final class Inbox implements java.util.concurrent.Executor {
        final List<Runnable> posted = new ArrayList<>();

        @Override
        public synchronized void execute(Runnable r) {
            posted.add(r);
        }

        synchronized int runAll() {
            int n = posted.size();
            posted.forEach(Runnable::run);
            posted.clear();
            return n;
        }
    }

    @Test
    void claimsThatFitAreGrantedAtOnceAndReleaseGivesTheBytesBack() {
        DataBudget b = new DataBudget(1000);
        Inbox inbox = new Inbox();
        DataBudget.Claim a = b.claim(600, inbox, () -> { });
        DataBudget.Claim c = b.claim(400, inbox, () -> { });
        assertTrue(a.grantedAtOnce() && a.granted());
        assertTrue(c.grantedAtOnce());
        assertEquals(1000, b.used());
        a.release();
        a.release(); // idempotent
        assertEquals(400, b.used());
        c.release();
        assertEquals(0, b.used());
        assertEquals(0, inbox.runAll(), "callbacks of claims granted at once never run");
    }

    @Test
    void waitingClaimsAreGrantedInOrderAndASmallOneDoesNotOvertakeALargeOne() {
        DataBudget b = new DataBudget(1000);
        Inbox inbox = new Inbox();
        List<String> order = new ArrayList<>();
        DataBudget.Claim first = b.claim(700, inbox, () -> { });
        DataBudget.Claim big = b.claim(900, inbox, () -> order.add("big"));
        DataBudget.Claim small = b.claim(100, inbox, () -> order.add("small"));
        assertFalse(big.grantedAtOnce() || big.granted());
        assertFalse(small.granted(), "100 bytes would fit, but the 900 waiting first go first");
        assertEquals(2, b.waiting());
        assertEquals(2, b.waited());
        first.release();
        assertTrue(big.granted());
        assertTrue(small.granted(), "900 + 100 fit together");
        assertEquals(1000, b.used());
        assertEquals(2, inbox.runAll());
        assertEquals(List.of("big", "small"), order);
    }

    @Test
    void aClaimLargerThanTheBudgetIsGrantedAloneOnly() {
        DataBudget b = new DataBudget(1000);
        Inbox inbox = new Inbox();
        DataBudget.Claim huge = b.claim(5000, inbox, () -> { });
        assertTrue(huge.grantedAtOnce(), "nothing else held: granted alone");
        DataBudget.Claim next = b.claim(1, inbox, () -> { });
        assertFalse(next.granted());
        huge.release();
        assertTrue(next.granted());
        DataBudget.Claim huge2 = b.claim(5000, inbox, () -> { });
        assertFalse(huge2.granted(), "waits until the budget is empty");
        next.release();
        assertTrue(huge2.granted());
        assertEquals(5000, b.used());
    }

    @Test
    void releasingAWaitingClaimLeavesTheQueueAndLetsTheNextOneIn() {
        DataBudget b = new DataBudget(1000);
        Inbox inbox = new Inbox();
        AtomicBoolean cancelledRan = new AtomicBoolean();
        DataBudget.Claim held = b.claim(800, inbox, () -> { });
        DataBudget.Claim cancelled = b.claim(900, inbox, () -> cancelledRan.set(true));
        DataBudget.Claim behind = b.claim(200, inbox, () -> { });
        assertFalse(behind.granted(), "queued behind the 900");
        cancelled.release(); // e.g. its command was aborted while it waited
        assertTrue(behind.granted(), "800 + 200 fit once the 900 left the queue");
        assertEquals(0, b.waiting());
        held.release();
        behind.release();
        assertEquals(0, b.used());
        inbox.runAll();
        assertFalse(cancelledRan.get(), "a claim that left the queue is never granted");
    }

    @Test
    void aGrantForALoopThatIsGoneGivesTheBytesBack() {
        DataBudget b = new DataBudget(1000);
        DataBudget.Claim held = b.claim(1000, Runnable::run, () -> { });
        DataBudget.Claim orphan = b.claim(500, r -> {
            throw new java.util.concurrent.RejectedExecutionException("loop shut down");
        }, () -> { });
        held.release();
        assertEquals(0, b.used(), "the rejected grant released itself");
        assertEquals(0, b.waiting());
        assertFalse(orphan.granted());
    }

    @Test
    void roomWatchersRunOnceTheBudgetIsNoLongerPressed() {
        DataBudget b = new DataBudget(1000);
        Inbox inbox = new Inbox();
        DataBudget.Claim a = b.claim(1000, inbox, () -> { });
        assertTrue(b.pressed(), "all of it held");
        int[] ran = {0};
        b.whenRoom(inbox, () -> ran[0]++);
        DataBudget.Claim w = b.claim(600, inbox, () -> { });
        assertTrue(b.pressed());
        assertEquals(0, inbox.runAll(), "no room yet");
        a.release();
        assertTrue(w.granted());
        assertFalse(b.pressed(), "600 of 1000 held, nobody waiting");
        assertEquals(2, inbox.runAll(), "the grant and the watcher");
        assertEquals(1, ran[0]);
        DataBudget.Claim rest = b.claim(400, inbox, () -> { });
        assertTrue(rest.grantedAtOnce());
        assertTrue(b.pressed(), "exactly full counts as pressed");
        b.whenRoom(inbox, () -> ran[0]++);
        w.release();
        assertEquals(1, inbox.runAll());
        assertEquals(2, ran[0]);
        b.whenRoom(inbox, () -> ran[0]++);
        assertEquals(1, inbox.runAll(), "not pressed now: posted at once");
        assertEquals(3, ran[0]);
        rest.release();
        assertEquals(0, inbox.runAll(), "watchers run once");
    }

    @Test
    void waitingIsLoggedOncePerIntervalNotOncePerCommand() {
        DataBudget b = new DataBudget(1000);
        Inbox inbox = new Inbox();
        b.claim(1000, inbox, () -> { });
        assertEquals(0, b.warnings(), "nothing waited yet");
        for (int i = 0; i < 100; i++) {
            b.claim(10, inbox, () -> { });
        }
        assertEquals(100, b.waited());
        assertEquals(1, b.warnings(), "one warning for a hundred waits within a minute");
    }

    @Test
    void misuseIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new DataBudget(0));
        DataBudget b = new DataBudget(10);
        assertThrows(IllegalArgumentException.class, () -> b.claim(-1, Runnable::run, () -> { }));
    }

    /**
     * Four threads claiming while a fifth gives granted claims back a little later: never more than
     * the limit held at once, every claim granted, nothing left over.
     */
    @Test
    void concurrentClaimsStayWithinTheLimitAndAllComplete() throws Exception {
        long limit = 64 * 1024;
        DataBudget b = new DataBudget(limit);
        int threads = 4;
        int perThread = 5000;
        ExecutorService grants = Executors.newFixedThreadPool(2);
        ExecutorService workers = Executors.newFixedThreadPool(threads);
        java.util.concurrent.LinkedBlockingQueue<Object[]> granted = new java.util.concurrent.LinkedBlockingQueue<>();
        AtomicLong held = new AtomicLong();
        AtomicLong maxHeld = new AtomicLong();
        ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
        CountDownLatch done = new CountDownLatch(threads * perThread);
        Thread releaser = new Thread(() -> {
            try {
                while (done.getCount() > 0) {
                    Object[] g = granted.poll(10, TimeUnit.MILLISECONDS);
                    if (g != null) {
                        held.addAndGet(-(Long) g[1]);
                        ((DataBudget.Claim) g[0]).release();
                        done.countDown();
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        releaser.start();
        for (int w = 0; w < threads; w++) {
            long seed = w;
            workers.execute(() -> {
                Random rnd = new Random(seed);
                for (int i = 0; i < perThread; i++) {
                    long bytes = 1 + rnd.nextInt(16 * 1024);
                    DataBudget.Claim[] box = new DataBudget.Claim[1];
                    Runnable use = () -> {
                        long now = held.addAndGet(bytes);
                        maxHeld.accumulateAndGet(now, Math::max);
                        if (now > limit) {
                            errors.add("held " + now + " > " + limit);
                        }
                        granted.add(new Object[] {box[0], bytes});
                    };
                    synchronized (box) {
                        box[0] = b.claim(bytes, grants, () -> {
                            synchronized (box) {
                                use.run();
                            }
                        });
                        if (box[0].grantedAtOnce()) {
                            use.run();
                        }
                    }
                }
            });
        }
        assertTrue(done.await(60, TimeUnit.SECONDS), "every claim granted");
        releaser.join();
        workers.shutdown();
        grants.shutdown();
        assertTrue(errors.isEmpty(), errors.toString());
        assertEquals(0, b.used());
        assertEquals(0, b.waiting());
        assertTrue(maxHeld.get() <= limit);
        assertTrue(b.waited() > 0, "the load made claims wait");
    }
}
