package io.fastblock.gateway.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ChunkMapCacheTest {
    private static final GroupInfo GROUP = new GroupInfo(7, 3, List.of(
            new GroupMember("a", "10.0.0.1", 9401, true),
            new GroupMember("b", "10.0.0.2", 9401, true),
            new GroupMember("c", "10.0.0.3", 9401, false)));

    /** Answers are completed by the test, to see concurrent callers share one call. */
    private static final class ManualSource implements ChunkMapSource {
        final AtomicInteger lookups = new AtomicInteger();
        final AtomicInteger allocations = new AtomicInteger();
        CompletableFuture<ChunkLocation> pending = new CompletableFuture<>();

        @Override
        public CompletableFuture<ChunkLocation> lookupChunk(String volumeName, long index) {
            lookups.incrementAndGet();
            return pending;
        }

        @Override
        public CompletableFuture<ChunkLocation> allocateChunk(String volumeName, long index) {
            allocations.incrementAndGet();
            return pending;
        }
    }

    @Test
    void concurrentLookupsShareOneNamenodeCall() throws Exception {
        ManualSource source = new ManualSource();
        ChunkMapCache cache = new ChunkMapCache("v", source, Duration.ofSeconds(1));
        CompletableFuture<Optional<ChunkRoute>> a = cache.lookup(5);
        CompletableFuture<Optional<ChunkRoute>> b = cache.lookup(5);
        source.pending.complete(new ChunkLocation(5, true, GROUP));
        ChunkRoute route = a.get().orElseThrow();
        assertEquals(route, b.get().orElseThrow());
        assertEquals(1, source.lookups.get());
        assertEquals(7, route.groupId());
        assertEquals(3, route.chainVersion());
        assertEquals(new NodeAddress("10.0.0.1", 9401), route.head().address());
        assertEquals(false, route.members().get(2).live());
    }

    @Test
    void concurrentAllocationsShareOneNamenodeCallAndFillTheMap() throws Exception {
        ManualSource source = new ManualSource();
        ChunkMapCache cache = new ChunkMapCache("v", source, Duration.ofSeconds(1));
        CompletableFuture<ChunkRoute> a = cache.allocate(1);
        CompletableFuture<ChunkRoute> b = cache.allocate(1);
        source.pending.complete(new ChunkLocation(1, true, GROUP));
        assertEquals(a.get(), b.get());
        assertEquals(1, source.allocations.get());
        assertEquals(a.get(), cache.lookup(1).get().orElseThrow());
        assertEquals(0, source.lookups.get(), "allocation answered the lookup");
        assertSame(a.get(), cache.allocate(1).get());
        assertEquals(1, source.allocations.get());
    }

    @Test
    void cachedRouteIsKnownOnlyOnceAllocatedAndUntilInvalidated() throws Exception {
        ManualSource source = new ManualSource();
        ChunkMapCache cache = new ChunkMapCache("v", source, Duration.ofSeconds(1));
        assertNull(cache.cachedRoute(2));
        CompletableFuture<ChunkRoute> a = cache.allocate(2);
        assertNull(cache.cachedRoute(2), "an allocation in flight is not a known route");
        source.pending.complete(new ChunkLocation(2, true, GROUP));
        assertSame(a.get(), cache.cachedRoute(2));
        cache.invalidate(2, a.get());
        assertNull(cache.cachedRoute(2), "a rejected route is asked for again");
        cache.allocate(3);
        cache.clear();
        assertNull(cache.cachedRoute(3));
    }

    @Test
    void invalidateDropsOnlyTheRouteThatWasRejected() throws Exception {
        InMemoryCluster cluster = new InMemoryCluster(1 << 20, 3);
        ChunkMapCache cache = new ChunkMapCache("v", cluster, Duration.ofSeconds(1));
        ChunkRoute first = cache.allocate(0).get();
        cluster.bumpChain(new GroupInfo(1, 2, cluster.group.members()));
        ChunkRoute unrelated = new ChunkRoute(1, 99, first.members());
        cache.invalidate(0, unrelated);
        assertEquals(first, cache.lookup(0).get().orElseThrow(), "a different route is not dropped");
        cache.invalidate(0, first);
        ChunkRoute second = cache.lookup(0).get().orElseThrow();
        assertEquals(2, second.chainVersion());
        cache.invalidate(0, first); // late refusal of the old route: keeps the new one
        assertEquals(second, cache.lookup(0).get().orElseThrow());
        assertEquals(1, cluster.lookups.get());
    }

    @Test
    void chunksOfOneGroupShareOneRouteObjectAndAreStillInvalidatedOneByOne() throws Exception {
        InMemoryCluster cluster = new InMemoryCluster(1 << 20, 3);
        ChunkMapCache cache = new ChunkMapCache("v", cluster, Duration.ofSeconds(1));
        ChunkRoute first = cache.allocate(0).get();
        assertSame(first, cache.allocate(1).get(), "one route object for the group's chunks");
        assertSame(first, cache.lookup(1).get().orElseThrow());
        cluster.bumpChain(new GroupInfo(1, 2, cluster.group.members()));
        cache.invalidate(0, first);
        ChunkRoute second = cache.lookup(0).get().orElseThrow();
        assertEquals(2, second.chainVersion());
        assertSame(first, cache.cachedRoute(1), "chunk 1 keeps its route until it is refused itself");
        assertSame(second, cache.allocate(2).get(), "a chunk allocated later shares the new route");
        cache.clear();
        assertNull(cache.cachedRoute(1));
    }

    @Test
    void failedLookupIsNotCached() throws Exception {
        InMemoryCluster cluster = new InMemoryCluster(1 << 20, 3);
        ChunkMapCache cache = new ChunkMapCache("v", cluster, Duration.ofSeconds(1));
        cluster.namenodeFailure = new NamenodeUnavailableException("down", null);
        ExecutionException e = assertThrows(ExecutionException.class, () -> cache.lookup(0).get());
        assertTrue(e.getCause() instanceof NamenodeUnavailableException);
        cluster.namenodeFailure = null;
        assertEquals(Optional.empty(), cache.lookup(0).get());
        assertEquals(2, cluster.lookups.get());
    }

    @Test
    void anAllocatedChunkWithoutMembersIsAnErrorNotAHang() {
        ManualSource source = new ManualSource();
        ChunkMapCache cache = new ChunkMapCache("v", source, Duration.ofSeconds(1));
        CompletableFuture<Optional<ChunkRoute>> f = cache.lookup(2);
        source.pending.complete(new ChunkLocation(2, true, new GroupInfo(1, 1, List.of())));
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get());
        assertTrue(e.getCause() instanceof IllegalArgumentException, e.toString());
        assertEquals(0, cache.size(), "the failed answer is not kept");
    }
}
