package io.fastblock.storage.chunk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class StripeTest {
    private final Stripe stripe = new Stripe("stripe-test");

    @AfterEach
    void stop() throws InterruptedException {
        stripe.shutdown();
        assertTrue(stripe.awaitTermination(10, TimeUnit.SECONDS));
    }

    @Test
    void theStripeThreadHasANettyBufferCache() {
        // Read buffers are allocated on the stripe and released on a network loop; only a Netty
        // thread gets the pool's thread cache they go back to (see BufferPoolDefaults).
        Thread t = CompletableFuture.supplyAsync(Thread::currentThread, stripe).join();
        assertInstanceOf(io.netty.util.concurrent.FastThreadLocalThread.class, t);
        assertTrue(t.isDaemon());
    }

    @Test
    void idleStripeRunsTheWorkOnTheCallersThread() {
        CompletableFuture<Thread> ran = stripe.tryHere(Thread::currentThread);
        assertNotNull(ran);
        assertSame(Thread.currentThread(), ran.join());
    }

    @Test
    void workQueuedOrRunningGoesFirst() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch running = new CountDownLatch(1);
        List<String> order = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> first = CompletableFuture.runAsync(() -> {
            running.countDown();
            await(release);
            order.add("write 1");
        }, stripe);
        CompletableFuture<Void> second = CompletableFuture.runAsync(() -> order.add("write 2"), stripe);
        assertTrue(running.await(10, TimeUnit.SECONDS));
        assertNull(stripe.tryHere(() -> order.add("read")), "a task runs: the read must queue behind it");
        release.countDown();
        first.get(10, TimeUnit.SECONDS);
        second.get(10, TimeUnit.SECONDS);
        assertEquals(List.of("write 1", "write 2"), order);
        // Both done: idle again once the second task has given its turn back (its future completes just before).
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!stripe.idle() && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertNotNull(stripe.tryHere(() -> order.add("read")));
        assertEquals(List.of("write 1", "write 2", "read"), order);
    }

    @Test
    void workOnTheStripeNeverRunsMoreWorkInline() throws Exception {
        CompletableFuture<CompletableFuture<String>> nested = CompletableFuture.supplyAsync(
                () -> stripe.tryHere(() -> "inline"), stripe);
        assertNull(nested.get(10, TimeUnit.SECONDS), "the stripe's own thread holds its turn");
    }

    @Test
    void failuresLookLikeTheStripesOwn() {
        CompletableFuture<Object> io = stripe.tryHere(() -> {
            throw new IOException("disk gone");
        });
        CompletionException e = assertThrows(CompletionException.class, io::join);
        assertInstanceOf(UncheckedIOException.class, e.getCause());
        assertEquals("disk gone", e.getCause().getCause().getMessage());

        CompletableFuture<Object> queued = CompletableFuture.supplyAsync(() -> {
            throw ChunkStore.uncheck(new IOException("disk gone"));
        }, stripe);
        CompletionException q = assertThrows(CompletionException.class, queued::join);
        assertEquals(e.getCause().getClass(), q.getCause().getClass());
    }

    @Test
    void aShutDownStripeRunsNothingInline() {
        stripe.shutdown();
        assertNull(stripe.tryHere(() -> "late"));
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
