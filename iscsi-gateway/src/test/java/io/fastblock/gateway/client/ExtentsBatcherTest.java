package io.fastblock.gateway.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.gateway.scsi.DeviceException;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.Extents;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * One EXTENTS out per chunk; whoever asks meanwhile gets the answer of a request sent after they
 * asked (never of the one already out, which may predate a write they must see).
 */
class ExtentsBatcherTest {
    private static final ChunkId A = new ChunkId(7, 0);
    private static final ChunkId B = new ChunkId(7, 1);

    /** Each call is one request "sent": it completes when the test says. */
    private static final class Sends implements Supplier<CompletableFuture<Extents>> {
        final List<CompletableFuture<Extents>> sent = new ArrayList<>();

        @Override
        public synchronized CompletableFuture<Extents> get() {
            CompletableFuture<Extents> f = new CompletableFuture<>();
            sent.add(f);
            return f;
        }

        synchronized CompletableFuture<Extents> nth(int i) {
            return sent.get(i);
        }

        synchronized int count() {
            return sent.size();
        }
    }

    private static Extents extents(long offset) {
        return new Extents.Builder().add(offset, 4096).build();
    }

    @Test
    void askersDuringARequestShareTheNextOneNotTheOneOut() throws Exception {
        ExtentsBatcher batcher = new ExtentsBatcher();
        Sends sends = new Sends();
        CompletableFuture<Extents> first = batcher.ask(A, sends);
        assertEquals(1, sends.count());
        List<CompletableFuture<Extents>> later = new ArrayList<>();
        for (int i = 0; i < 31; i++) {
            later.add(batcher.ask(A, sends));
        }
        assertEquals(1, sends.count(), "nothing more is sent while one is out");
        sends.nth(0).complete(extents(0));
        assertEquals(extents(0), first.get());
        for (CompletableFuture<Extents> f : later) {
            assertFalse(f.isDone(), "the 31 later askers do not get the answer of a request sent before they asked");
        }
        assertEquals(2, sends.count(), "one request for all 31, sent when the first came back");
        sends.nth(1).complete(extents(8192));
        for (CompletableFuture<Extents> f : later) {
            assertEquals(extents(8192), f.get());
        }
        assertEquals(0, batcher.chunksInFlight());
        CompletableFuture<Extents> after = batcher.ask(A, sends);
        assertEquals(3, sends.count(), "with nothing out, a new ask is sent at once");
        sends.nth(2).complete(extents(4096));
        assertEquals(extents(4096), after.get());
    }

    @Test
    void chunksAreIndependentAndFailuresStayInTheirRound() throws Exception {
        ExtentsBatcher batcher = new ExtentsBatcher();
        Sends sends = new Sends();
        CompletableFuture<Extents> a1 = batcher.ask(A, sends);
        CompletableFuture<Extents> b1 = batcher.ask(B, sends);
        assertEquals(2, sends.count(), "another chunk does not wait");
        CompletableFuture<Extents> a2 = batcher.ask(A, sends);
        sends.nth(0).completeExceptionally(new DeviceException(DeviceException.Reason.IO_ERROR, "no member answered"));
        ExecutionException e = assertThrows(ExecutionException.class, a1::get);
        assertTrue(e.getCause() instanceof DeviceException, e.toString());
        assertEquals(3, sends.count(), "the next round is still sent");
        sends.nth(2).complete(extents(0));
        assertEquals(extents(0), a2.get());
        sends.nth(1).complete(extents(4096));
        assertEquals(extents(4096), b1.get());
        assertEquals(0, batcher.chunksInFlight());
    }

    @Test
    void theLatestAskersRouteSendsTheNextRound() throws Exception {
        ExtentsBatcher batcher = new ExtentsBatcher();
        Sends oldRoute = new Sends();
        Sends newRoute = new Sends();
        batcher.ask(A, oldRoute);
        batcher.ask(A, oldRoute);
        CompletableFuture<Extents> last = batcher.ask(A, newRoute);
        oldRoute.nth(0).complete(Extents.NONE);
        assertEquals(1, oldRoute.count());
        assertEquals(1, newRoute.count(), "a chain reconfigured meanwhile: the newest route is used");
        newRoute.nth(0).complete(extents(0));
        assertSame(newRoute.nth(0).get(), last.get());
    }

    @Test
    void manyThreadsAskingAtOnceAllGetAnAnswerAndNoRoundIsLost() throws Exception {
        ExtentsBatcher batcher = new ExtentsBatcher();
        // Answers come back on another thread, like storage answers on an event loop.
        ExecutorService answers = Executors.newSingleThreadExecutor();
        ExecutorService askers = Executors.newFixedThreadPool(4);
        try {
            Supplier<CompletableFuture<Extents>> send = () -> CompletableFuture.supplyAsync(() -> extents(0), answers);
            List<CompletableFuture<Extents>> all = java.util.Collections.synchronizedList(new ArrayList<>());
            CountDownLatch go = new CountDownLatch(1);
            for (int t = 0; t < 4; t++) {
                askers.submit(() -> {
                    go.await();
                    for (int i = 0; i < 2000; i++) {
                        all.add(batcher.ask(i % 2 == 0 ? A : B, send));
                    }
                    return null;
                });
            }
            go.countDown();
            askers.shutdown();
            assertTrue(askers.awaitTermination(30, TimeUnit.SECONDS));
            for (CompletableFuture<Extents> f : all) {
                assertEquals(extents(0), f.get(10, TimeUnit.SECONDS));
            }
            assertEquals(8000, all.size());
            assertEquals(0, batcher.chunksInFlight());
        } finally {
            answers.shutdownNow();
            askers.shutdownNow();
        }
    }
}
