package io.fastblock.storage.chain;

import static io.fastblock.storage.chain.InMemoryChain.ok;
import static io.fastblock.storage.chain.InMemoryChain.write;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.ReadRequest;
import io.fastblock.protocol.Status;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.WriteRequest;
import io.fastblock.protocol.meta.GroupRecord;
import io.netty.buffer.Unpooled;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Chain changes on the storage side, replicas linked in memory, real stores on disk; run for each
 * {@link TailLayout} by the subclasses.
 */
abstract class ChainReconfigurationTest {
    private static final int G = 1;
    private static final ChunkId CHUNK = new ChunkId(3, 0);

    @TempDir
    Path dir;
    private InMemoryChain chain;
    private InMemoryChain.Node a;
    private InMemoryChain.Node b;
    private InMemoryChain.Node c;

    @BeforeEach
    void start() throws Exception {
        chain = new InMemoryChain(new ChainLimits(64, 8 << 20, 10_000, 20, 8192), layout());
        chain.publish(new GroupRecord(G, 1, List.of("a", "b", "c")), true);
        a = chain.add("a", dir.resolve("a"));
        b = chain.add("b", dir.resolve("b"));
        c = chain.add("c", dir.resolve("c"));
    }

    abstract TailLayout layout();

    @AfterEach
    void stop() throws Exception {
        chain.close();
    }

    private static byte[] bytes(int seed, int n) {
        byte[] d = new byte[n];
        new Random(seed).nextBytes(d);
        return d;
    }

    /** Waits until the future is done, failing if it completes within {@code notBeforeMillis}. */
    private static StorageResponse pendingThen(CompletableFuture<StorageResponse> f, Runnable change) throws Exception {
        Thread.sleep(150);
        assertFalse(f.isDone(), "the write must wait while its successor is unreachable");
        change.run();
        return f.get(10, TimeUnit.SECONDS);
    }

    @Test
    void tailFailurePromotesTheMiddleWhichMakesItsCopyDurableThenAcknowledges() throws Exception {
        ok(a.call(write(G, 1, CHUNK, 0, bytes(1, 4096))));
        chain.down.add("c");
        CompletableFuture<StorageResponse> pending = a.send(write(G, 1, CHUNK, 4096, bytes(2, 4096)));
        StorageResponse r = pendingThen(pending, () -> chain.publish(new GroupRecord(G, 2, List.of("a", "b")), true));
        ok(r);
        assertEquals(1.0, b.chainMetrics.promotions.count());
        assertEquals("tail", b.service.roleIn(G));
        double appendsBefore = b.metrics.logAppends.count();
        ok(a.call(write(G, 2, CHUNK, 8192, bytes(3, 4096))));
        assertEquals(appendsBefore + 1, b.metrics.logAppends.count(), "the new tail appends to its log");
        if (layout() == TailLayout.LOG) {
            assertEquals(8192, b.chunks.sizeOf(CHUNK), "and no longer writes its chunk file in place");
        } else {
            assertEquals(12288, b.chunks.sizeOf(CHUNK), "and also writes its chunk file in place");
        }
        assertTrue(a.chainMetrics.latency("write", "head").count() >= 3, "head write latencies are recorded");
        // a resent its unacknowledged write with the new version although its successor stayed b:
        // b answered it as tail without applying it again, then took the new write as tail.
        assertEquals(1.0, b.chainMetrics.duplicatesSkipped.count());
        assertEquals(2, b.chainMetrics.latency("write", "tail").count());
        assertEquals(8192.0, b.chainMetrics.bytes("write", "tail").totalAmount());
        assertTrue(b.chainMetrics.reconfigurations.count() >= 1);
        for (InMemoryChain.Node n : List.of(a, b)) {
            assertArrayEquals(bytes(1, 4096), n.read(G, 2, CHUNK, 0, 4096));
            assertArrayEquals(bytes(2, 4096), n.read(G, 2, CHUNK, 4096, 4096));
            assertArrayEquals(bytes(3, 4096), n.read(G, 2, CHUNK, 8192, 4096));
        }
    }

    @Test
    void middleFailureResendsTheSentListToTheNewSuccessorInOrder() throws Exception {
        chain.down.add("b");
        List<CompletableFuture<StorageResponse>> pending = new ArrayList<>();
        // Overlapping writes: only applying them in order leaves the last one.
        for (int i = 0; i < 10; i++) {
            pending.add(a.send(write(G, 1, CHUNK, i * 512L, bytes(10 + i, 4096))));
        }
        Thread.sleep(150);
        pending.forEach(f -> assertFalse(f.isDone()));
        chain.publish(new GroupRecord(G, 2, List.of("a", "c")), true);
        for (CompletableFuture<StorageResponse> f : pending) {
            ok(f.get(10, TimeUnit.SECONDS));
        }
        assertTrue(a.chainMetrics.resends.count() >= 10, "resends " + a.chainMetrics.resends.count());
        assertArrayEquals(a.read(G, 2, CHUNK, 0, 9 * 512 + 4096), c.read(G, 2, CHUNK, 0, 9 * 512 + 4096));
        assertArrayEquals(bytes(19, 4096), c.read(G, 2, CHUNK, 9 * 512, 4096));
        assertEquals(0, a.service.sentSize(G));
    }

    @Test
    void headFailureMakesTheMiddleHeadAndOldVersionsAreStale() throws Exception {
        ok(a.call(write(G, 1, CHUNK, 0, bytes(1, 100))));
        chain.publish(new GroupRecord(G, 2, List.of("b", "c")), true);
        ok(b.call(write(G, 2, CHUNK, 100, bytes(2, 100))));
        StorageResponse stale = b.call(write(G, 1, CHUNK, 0, bytes(3, 100)));
        assertEquals(Status.STALE_CHAIN, stale.status());
        assertTrue(stale.message().contains("chain version 2, request has 1"), stale.message());
        StorageResponse notHead = a.call(write(G, 2, CHUNK, 0, bytes(3, 100)));
        assertEquals(Status.NOT_MEMBER, notHead.status(), notHead.message());
        assertArrayEquals(b.read(G, 2, CHUNK, 0, 200), c.read(G, 2, CHUNK, 0, 200));
    }

    @Test
    void aNewerVersionThanKnownMakesTheNodeRereadTheGroupFirst() throws Exception {
        chain.publish(new GroupRecord(G, 5, List.of("a", "b", "c")), false);
        ok(a.call(write(G, 5, CHUNK, 0, bytes(1, 10))));
        assertArrayEquals(bytes(1, 10), c.read(G, 5, CHUNK, 0, 10));
    }

    @Test
    void aResentWriteIsAppliedAtMostOncePerSequence() throws Exception {
        chain.publish(new GroupRecord(G, 2, List.of("a", "c")), true);
        WriteRequest old = new WriteRequest(1, WriteRequest.FLAG_FORWARDED, new ChainAddress(G, 2, 1), CHUNK, 0, 1000,
                Unpooled.wrappedBuffer(bytes(1, 64)));
        WriteRequest newer = new WriteRequest(2, WriteRequest.FLAG_FORWARDED, new ChainAddress(G, 2, 1), CHUNK, 0, 1001,
                Unpooled.wrappedBuffer(bytes(2, 64)));
        WriteRequest again = new WriteRequest(3, WriteRequest.FLAG_FORWARDED, new ChainAddress(G, 2, 1), CHUNK, 0, 1000,
                Unpooled.wrappedBuffer(bytes(1, 64)));
        ok(c.call(old));
        ok(c.call(newer));
        ok(c.call(again));
        assertEquals(1.0, c.chainMetrics.duplicatesSkipped.count());
        assertArrayEquals(bytes(2, 64), c.read(G, 2, CHUNK, 0, 64));
    }

    @Test
    void joiningNodeCopiesFromTheTailWhileWritesContinueThenBecomesADurableTail() throws Exception {
        chain.publish(new GroupRecord(G, 2, List.of("a", "b")), true);
        int size = 256 * 1024;
        byte[] ref = new byte[size];
        Random r = new Random(5);
        for (int i = 0; i < 64; i++) {
            int off = r.nextInt(size - 4096);
            byte[] d = bytes(100 + i, 4096);
            System.arraycopy(d, 0, ref, off, d.length);
            ok(a.call(write(G, 2, CHUNK, off, d)));
        }
        InMemoryChain.Node d = chain.add("d", dir.resolve("d"));
        chain.publish(new GroupRecord(G, 3, List.of("a", "b"), "d"), true);
        for (int i = 0; i < 64; i++) {
            int off = r.nextInt(size - 4096);
            byte[] data = bytes(200 + i, 4096);
            System.arraycopy(data, 0, ref, off, data.length);
            ok(a.call(write(G, 3, CHUNK, off, data)));
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!chain.caughtUp.contains(G + "/d") && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertTrue(chain.caughtUp.contains(G + "/d"), "d announced it caught up");
        assertTrue(d.chainMetrics.catchUpBytes.count() > 0);
        assertTrue(b.chainMetrics.latency("copy_read", "tail").count() > 0, "the tail timed the copy reads it served");
        StorageResponse noReads = d.call(new ReadRequest(1, new ChainAddress(G, 3, 1), CHUNK, 0, 10));
        assertEquals(Status.NOT_MEMBER, noReads.status());
        assertTrue(noReads.message().contains("joining"), noReads.message());
        chain.publish(new GroupRecord(G, 4, List.of("a", "b", "d")), true);
        byte[] last = bytes(999, 4096);
        System.arraycopy(last, 0, ref, 0, last.length);
        ok(a.call(write(G, 4, CHUNK, 0, last)));
        assertEquals(1.0, d.chainMetrics.promotions.count());
        assertTrue(b.log.logMetrics().folds.count() >= 1, "b folded its log when it stopped being tail");
        for (InMemoryChain.Node n : List.of(a, b, d)) {
            assertArrayEquals(ref, n.read(G, 4, CHUNK, 0, size), "replica " + n.id);
        }
    }

    private static io.fastblock.protocol.Extents extents(InMemoryChain.Node n, long version, int length) throws Exception {
        StorageResponse r = n.call(new io.fastblock.protocol.ExtentsRequest(1, new ChainAddress(G, version, 1), CHUNK, 0, length));
        try {
            assertEquals(Status.OK, r.status(), r.message());
            return io.fastblock.protocol.Extents.decode(r.data());
        } finally {
            r.data().release();
        }
    }

    /**
     * Trims before and during a catch-up: the joining node ends with the tail's bytes and exactly
     * its allocation (a written zero block allocated, trimmed ranges not), and so does the old
     * tail after folding its log's holes into its chunk file.
     */
    @Test
    void aJoiningNodeCopiesAllocationExactlyAndTrimsReachIt() throws Exception {
        chain.publish(new GroupRecord(G, 2, List.of("a", "b")), true);
        int size = 256 * 1024;
        byte[] ref = new byte[size];
        boolean[] allocated = new boolean[size / 4096];
        java.util.function.BiConsumer<Integer, Integer> mark = (from, to) -> java.util.Arrays.fill(allocated, from, to, true);
        byte[] data = bytes(7, size);
        System.arraycopy(data, 0, ref, 0, size);
        ok(a.call(write(G, 2, CHUNK, 0, data)));
        mark.accept(0, size / 4096);
        ok(a.call(WriteRequest.trim(1, new ChainAddress(G, 2, 1), CHUNK, 64 * 1024, 64 * 1024)));
        java.util.Arrays.fill(ref, 64 * 1024, 128 * 1024, (byte) 0);
        java.util.Arrays.fill(allocated, 16, 32, false);
        ok(a.call(write(G, 2, CHUNK, 80 * 1024, new byte[4096]))); // zeros, allocated
        allocated[20] = true;

        InMemoryChain.Node d = chain.add("d", dir.resolve("d"));
        chain.publish(new GroupRecord(G, 3, List.of("a", "b"), "d"), true);
        ok(a.call(WriteRequest.trim(1, new ChainAddress(G, 3, 1), CHUNK, 192 * 1024, 64 * 1024)));
        java.util.Arrays.fill(ref, 192 * 1024, 256 * 1024, (byte) 0);
        java.util.Arrays.fill(allocated, 48, 64, false);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!chain.caughtUp.contains(G + "/d") && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertTrue(chain.caughtUp.contains(G + "/d"), "d announced it caught up");
        chain.publish(new GroupRecord(G, 4, List.of("a", "b", "d")), true);
        ok(a.call(write(G, 4, CHUNK, 0, new byte[] {1})));
        ref[0] = 1;
        io.fastblock.protocol.Extents.Builder want = new io.fastblock.protocol.Extents.Builder();
        for (int i = 0; i < allocated.length; i++) {
            if (allocated[i]) {
                want.add(i * 4096L, 4096);
            }
        }
        for (InMemoryChain.Node n : List.of(a, b, d)) {
            assertArrayEquals(ref, n.read(G, 4, CHUNK, 0, size), "replica " + n.id);
            assertEquals(want.build(), extents(n, 4, size), "allocation on " + n.id);
        }
    }

    @Test
    void aStalledSuccessorStopsAdmissionAtTheSentListBound() throws Exception {
        chain.stalled.add("b");
        List<CompletableFuture<StorageResponse>> pending = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            pending.add(a.send(write(G, 1, CHUNK, i * 4096L, bytes(i, 4096))));
        }
        Thread.sleep(200);
        assertEquals(64, a.service.sentSize(G), "the sent list holds its bound and no more");
        assertEquals(64, chain.stalledRequests.size(), "nothing beyond the bound was forwarded");
        assertTrue(a.chainMetrics.sentListFull.count() >= 1);
        pending.forEach(f -> assertFalse(f.isDone()));
    }

    @Test
    void writesWaitingOnADeadJoiningNodeCompleteWhenItIsRemoved() throws Exception {
        chain.publish(new GroupRecord(G, 2, List.of("a", "b"), "c"), true);
        chain.down.add("c");
        CompletableFuture<StorageResponse> pending = a.send(write(G, 2, CHUNK, 0, bytes(1, 4096)));
        StorageResponse r = pendingThen(pending, () -> chain.publish(new GroupRecord(G, 3, List.of("a", "b")), true));
        ok(r);
        assertArrayEquals(bytes(1, 4096), b.read(G, 3, CHUNK, 0, 4096));
    }

    @Test
    void catchUpRestartsFromTheNewTailWhenTheTailFailsMeanwhile() throws Exception {
        chain.publish(new GroupRecord(G, 2, List.of("a", "b")), true);
        byte[] ref = new byte[64 * 1024];
        for (int i = 0; i < 16; i++) {
            byte[] d = bytes(300 + i, 4096);
            System.arraycopy(d, 0, ref, i * 4096, 4096);
            ok(a.call(write(G, 2, CHUNK, i * 4096L, d)));
        }
        // d joins but its tail b dies before d has copied anything.
        chain.down.add("b");
        InMemoryChain.Node d = chain.add("d", dir.resolve("d"));
        chain.publish(new GroupRecord(G, 3, List.of("a", "b"), "d"), true);
        Thread.sleep(100);
        assertFalse(chain.caughtUp.contains(G + "/d"));
        chain.publish(new GroupRecord(G, 4, List.of("a"), "d"), true);
        byte[] more = bytes(400, 4096);
        System.arraycopy(more, 0, ref, 8192, 4096);
        ok(a.call(write(G, 4, CHUNK, 8192, more)));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!chain.caughtUp.contains(G + "/d") && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertTrue(chain.caughtUp.contains(G + "/d"), "d caught up from the new tail a");
        chain.publish(new GroupRecord(G, 5, List.of("a", "d")), true);
        for (InMemoryChain.Node n : List.of(a, d)) {
            assertArrayEquals(ref, n.read(G, 5, CHUNK, 0, ref.length), "replica " + n.id);
        }
    }
}
