package io.fastblock.gateway.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ChunkMapBudgetTest {
    private static final Duration TTL = Duration.ofSeconds(1);

    private static ChunkMapCache cache(String volume, ChunkMapSource source, ChunkMapBudget budget) {
        return new ChunkMapCache(volume, source, TTL, budget);
    }

    @Test
    void volumesTogetherHoldNoMoreThanTheLimitAndTheOldestGoFirst() throws Exception {
        ChunkMapBudget budget = new ChunkMapBudget(4);
        InMemoryCluster one = new InMemoryCluster(1 << 20, 3);
        InMemoryCluster two = new InMemoryCluster(1 << 20, 3);
        ChunkMapCache a = cache("a", one, budget);
        ChunkMapCache b = cache("b", two, budget);
        a.allocate(0).get();
        a.allocate(1).get();
        b.allocate(0).get();
        b.allocate(1).get();
        assertEquals(0, budget.evictions());
        a.allocate(2).get();
        b.allocate(2).get();
        assertEquals(4, a.size() + b.size());
        assertEquals(4, budget.slots());
        assertEquals(2, budget.evictions());
        assertNull(a.cachedRoute(0), "the oldest entry was dropped");
        assertNull(a.cachedRoute(1));
        assertNotNull(a.cachedRoute(2));
        assertNotNull(b.cachedRoute(0));
        // A dropped chunk is asked for again, and the answer is the namenode's.
        int lookups = one.lookups.get();
        assertEquals(1, a.lookup(0).get().orElseThrow().groupId());
        assertEquals(lookups + 1, one.lookups.get());
        assertEquals(4, a.size() + b.size());
        assertNull(b.cachedRoute(0), "b's oldest made room for it");
    }

    @Test
    void aSlotWhoseEntryIsGoneDropsNothingElse() throws Exception {
        ChunkMapBudget budget = new ChunkMapBudget(2);
        ChunkMapCache c = cache("v", new InMemoryCluster(1 << 20, 3), budget);
        ChunkRoute zero = c.allocate(0).get();
        c.invalidate(0, zero);
        c.allocate(1).get();
        c.allocate(2).get();
        assertEquals(1, budget.evictions(), "the refused chunk's slot was taken back");
        assertNotNull(c.cachedRoute(1), "and it dropped nothing that was cached");
        assertNotNull(c.cachedRoute(2));
        assertEquals(2, c.size());
    }

    @Test
    void aClearedCacheGivesItsSlotsBack() throws Exception {
        ChunkMapBudget budget = new ChunkMapBudget(3);
        ChunkMapCache a = cache("a", new InMemoryCluster(1 << 20, 3), budget);
        ChunkMapCache b = cache("b", new InMemoryCluster(1 << 20, 3), budget);
        a.allocate(0).get();
        b.allocate(0).get();
        a.allocate(1).get();
        a.clear(); // the lease moved
        assertEquals(1, budget.slots());
        a.allocate(0).get();
        a.allocate(1).get();
        assertEquals(3, budget.slots());
        assertEquals(0, budget.evictions());
        assertNotNull(a.cachedRoute(0), "old slots of a did not drop its new entries");
        assertNotNull(b.cachedRoute(0), "nor b's");
    }

    @Test
    void aCacheNoLongerUsedAgesOutWithoutBeingClosed() throws Exception {
        ChunkMapBudget budget = new ChunkMapBudget(4);
        ChunkMapCache old = cache("a", new InMemoryCluster(1 << 20, 3), budget);
        for (long i = 0; i < 4; i++) {
            old.allocate(i).get();
        }
        ChunkMapCache next = cache("a", new InMemoryCluster(1 << 20, 3), budget);
        for (long i = 0; i < 4; i++) {
            next.allocate(i).get();
        }
        assertEquals(0, old.size());
        assertEquals(4, next.size());
    }

    @Test
    void unallocatedAnswersCountAndAnExpiredOneReplacedKeepsItsSlot() throws Exception {
        ChunkMapBudget budget = new ChunkMapBudget(4);
        AtomicLong now = new AtomicLong();
        InMemoryCluster cluster = new InMemoryCluster(1 << 20, 3);
        ChunkMapCache c = new ChunkMapCache("v", cluster, TTL, now::get, budget);
        for (long i = 0; i < 10; i++) {
            assertEquals(Optional.empty(), c.lookup(i).get());
        }
        assertEquals(4, c.size(), "a full read of an empty volume is bounded too");
        assertEquals(6, budget.evictions());
        now.addAndGet(TTL.toNanos());
        assertEquals(Optional.empty(), c.lookup(9).get());
        assertEquals(11, cluster.lookups.get(), "the expired answer was asked for again");
        assertEquals(4, budget.slots());
        assertEquals(6, budget.evictions(), "replacing it took no second slot");
    }

    @Test
    void anAnswerInFlightWhenItsChunkIsDroppedStillCompletesAndIsNotKept() throws Exception {
        ChunkMapBudget budget = new ChunkMapBudget(1);
        CompletableFuture<ChunkLocation> pending = new CompletableFuture<>();
        ChunkMapCache a = cache("a", new ChunkMapSource() {
            @Override
            public CompletableFuture<ChunkLocation> lookupChunk(String volumeName, long index) {
                return pending;
            }

            @Override
            public CompletableFuture<ChunkLocation> allocateChunk(String volumeName, long index) {
                throw new AssertionError("not used");
            }
        }, budget);
        CompletableFuture<Optional<ChunkRoute>> waiting = a.lookup(0);
        cache("b", new InMemoryCluster(1 << 20, 3), budget).allocate(0).get();
        assertEquals(0, a.size());
        InMemoryCluster cluster = new InMemoryCluster(1 << 20, 3);
        pending.complete(new ChunkLocation(0, true, cluster.group));
        assertEquals(1, waiting.get(5, TimeUnit.SECONDS).orElseThrow().groupId());
        assertEquals(0, a.size(), "a dropped chunk's late answer does not come back without a slot");
    }

    @Test
    void routesKeptForSharingAreBounded() throws Exception {
        // Every chunk on its own chain version: as many distinct routes as chunks.
        InMemoryCluster members = new InMemoryCluster(1 << 20, 3);
        ChunkMapCache c = cache("v", new ChunkMapSource() {
            @Override
            public CompletableFuture<ChunkLocation> lookupChunk(String volumeName, long index) {
                return CompletableFuture.completedFuture(new ChunkLocation(index, true,
                        new GroupInfo(1, index, members.group.members())));
            }

            @Override
            public CompletableFuture<ChunkLocation> allocateChunk(String volumeName, long index) {
                return lookupChunk(volumeName, index);
            }
        }, new ChunkMapBudget(1 << 20));
        int n = ChunkMapCache.MAX_SHARED_ROUTES + 100;
        for (long i = 0; i < n; i++) {
            assertEquals(i, c.lookup(i).get().orElseThrow().chainVersion());
        }
        assertTrue(c.sharedRoutes() <= ChunkMapCache.MAX_SHARED_ROUTES, "shared routes: " + c.sharedRoutes());
        for (long i = 0; i < n; i++) {
            assertEquals(i, c.cachedRoute(i).chainVersion(), "entries keep their routes");
        }
    }

    @Test
    void concurrentVolumesNeverHoldMoreThanTheLimitAndAlwaysAnswerRight() throws Exception {
        int limit = 64;
        ChunkMapBudget budget = new ChunkMapBudget(limit);
        List<InMemoryCluster> clusters = new ArrayList<>();
        List<ChunkMapCache> caches = new ArrayList<>();
        for (int v = 0; v < 3; v++) {
            InMemoryCluster cluster = new InMemoryCluster(1 << 20, 3);
            cluster.bumpChain(new GroupInfo(v + 1, 1, cluster.group.members()));
            clusters.add(cluster);
            caches.add(cache("v" + v, cluster, budget));
        }
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                long seed = t;
                done.add(pool.submit(() -> {
                    SplittableRandom r = new SplittableRandom(seed);
                    for (int i = 0; i < 20_000; i++) {
                        int v = r.nextInt(3);
                        long index = r.nextInt(500);
                        ChunkRoute route = (r.nextBoolean() ? caches.get(v).allocate(index)
                                : caches.get(v).lookup(index).thenApply(o -> o.orElse(null))).join();
                        if (route != null && route.groupId() != v + 1) {
                            throw new AssertionError("volume " + v + " got group " + route.groupId());
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        int held = caches.stream().mapToInt(ChunkMapCache::size).sum();
        assertTrue(held <= limit, "held " + held);
        assertTrue(budget.slots() <= limit && budget.slots() >= held, "slots " + budget.slots());
        assertTrue(budget.evictions() > 1000, "evictions " + budget.evictions());
    }

    @Test
    void aLimitBelowOneIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new ChunkMapBudget(0));
        assertTrue(e.getMessage().contains("--chunk-map-entries must be at least 1"), e.getMessage());
    }
}
