package io.fastblock.gateway.client;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * One volume's chunk map as far as this gateway has needed it: chunk index -> route. Filled from
 * namenode lookups and allocations; concurrent requests for the same chunk share one namenode
 * call. An "unallocated" answer is kept only for {@code unallocatedTtl} (another gateway may
 * allocate the chunk meanwhile) or until this gateway allocates it. A route a storage node
 * rejected (stale chain, unknown group, not a member) is dropped with {@link #invalidate}. The
 * gateway's {@link ChunkMapBudget} bounds the entries of all caches together; a chunk it drops is
 * asked for again when next used.
 */
public final class ChunkMapCache {
    private sealed interface Entry permits Allocated, Unallocated {
    }

    private record Allocated(ChunkRoute route) implements Entry {
    }

    private record Unallocated(long fetchedAtNanos) implements Entry {
    }

    private final String volumeName;
    private final ChunkMapSource source;
    private final long unallocatedTtlNanos;
    private final LongSupplier nanoClock;
    private final ChunkMapBudget budget;
    private final ConcurrentHashMap<Long, CompletableFuture<Entry>> entries = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Long, CompletableFuture<ChunkRoute>> allocations = new ConcurrentHashMap<>();
    /**
     * One completed answer per distinct route, shared by every chunk that has it: a cached allocated
     * chunk then costs its map entry and key (about 50 bytes) instead of a route of its own (343
     * bytes measured per chunk before), which matters for volumes of many terabytes.
     */
    private final ConcurrentHashMap<ChunkRoute, CompletableFuture<Entry>> answers = new ConcurrentHashMap<>();
    /**
     * Distinct routes kept for sharing. Each chain change adds one per group; past this many the
     * shared set starts over (entries keep the routes they have), so it cannot grow for ever.
     */
    static final int MAX_SHARED_ROUTES = 4096;

    public ChunkMapCache(String volumeName, ChunkMapSource source, Duration unallocatedTtl, LongSupplier nanoClock,
                         ChunkMapBudget budget) {
        this.volumeName = volumeName;
        this.source = source;
        this.unallocatedTtlNanos = unallocatedTtl.toNanos();
        this.nanoClock = nanoClock;
        this.budget = budget;
    }

    public ChunkMapCache(String volumeName, ChunkMapSource source, Duration unallocatedTtl, ChunkMapBudget budget) {
        this(volumeName, source, unallocatedTtl, System::nanoTime, budget);
    }

    /** A cache with a budget of its own (tests, tools). */
    public ChunkMapCache(String volumeName, ChunkMapSource source, Duration unallocatedTtl) {
        this(volumeName, source, unallocatedTtl, System::nanoTime, new ChunkMapBudget(ChunkMapBudget.DEFAULT_LIMIT));
    }

    /** The chunk's route, or empty when the namenode says it is not allocated. Never allocates. */
    public CompletableFuture<Optional<ChunkRoute>> lookup(long index) {
        CompletableFuture<Entry> current = entries.get(index);
        if (current == null || expired(current)) {
            CompletableFuture<Entry> fresh = new CompletableFuture<>();
            boolean[] added = new boolean[1];
            CompletableFuture<Entry> winner = entries.compute(index, (k, cur) -> {
                if (cur != null && !expired(cur)) {
                    return cur;
                }
                added[0] = cur == null;
                return fresh;
            });
            if (added[0] && winner == fresh) {
                // A key already present (an expired answer replaced) has its slot in the budget.
                budget.admit(this, index);
            }
            if (winner == fresh) {
                source.lookupChunk(volumeName, index).whenComplete((loc, err) -> {
                    CompletableFuture<Entry> answer = null;
                    if (err == null) {
                        try {
                            answer = loc.allocated() ? answerFor(ChunkRoute.of(loc))
                                    : CompletableFuture.completedFuture(new Unallocated(nanoClock.getAsLong()));
                        } catch (RuntimeException bad) {
                            err = bad;
                        }
                    }
                    if (answer == null) {
                        entries.remove(index, fresh);
                        fresh.completeExceptionally(err);
                    } else {
                        entries.replace(index, fresh, answer);
                        fresh.complete(answer.join());
                    }
                });
            }
            current = winner;
        }
        return current.thenApply(e -> e instanceof Allocated a ? Optional.of(a.route()) : Optional.empty());
    }

    /** The chunk's route when this gateway knows it allocated (no namenode call needed), else null. */
    public ChunkRoute cachedRoute(long index) {
        CompletableFuture<Entry> current = entries.get(index);
        if (current != null && current.isDone() && !current.isCompletedExceptionally()
                && current.join() instanceof Allocated a) {
            return a.route();
        }
        return null;
    }

    /** The chunk's route, allocating the chunk (idempotently) if this gateway does not know it allocated. */
    public CompletableFuture<ChunkRoute> allocate(long index) {
        ChunkRoute known = cachedRoute(index);
        if (known != null) {
            return CompletableFuture.completedFuture(known);
        }
        CompletableFuture<ChunkRoute> fresh = new CompletableFuture<>();
        CompletableFuture<ChunkRoute> inflight = allocations.putIfAbsent(index, fresh);
        if (inflight != null) {
            return inflight;
        }
        source.allocateChunk(volumeName, index).whenComplete((loc, err) -> {
            if (err != null) {
                allocations.remove(index, fresh);
                fresh.completeExceptionally(err);
                return;
            }
            CompletableFuture<Entry> answer;
            try {
                answer = answerFor(ChunkRoute.of(loc));
            } catch (RuntimeException bad) {
                allocations.remove(index, fresh);
                fresh.completeExceptionally(bad);
                return;
            }
            if (entries.put(index, answer) == null) {
                budget.admit(this, index);
            }
            allocations.remove(index, fresh);
            fresh.complete(((Allocated) answer.join()).route());
        });
        return fresh;
    }

    /**
     * Forgets {@code seen} for chunk {@code index} so the next request asks the namenode again;
     * a newer route already cached by a concurrent refresh is kept.
     */
    public void invalidate(long index, ChunkRoute seen) {
        CompletableFuture<Entry> current = entries.get(index);
        if (current != null && current.isDone() && !current.isCompletedExceptionally()
                && current.join() instanceof Allocated a && a.route().equals(seen)) {
            entries.remove(index, current);
        }
    }

    /**
     * Forgets every cached answer: after the write lease moved, another gateway may have allocated
     * chunks or seen chains change, so nothing cached here is trusted any more.
     */
    public void clear() {
        // Slots first: an entry added meanwhile then keeps the slot it takes (one taken back after
        // its entry was added would leave that entry outside the bound).
        budget.forget(this);
        entries.clear();
        answers.clear();
    }

    /** The budget took chunk {@code index}'s slot back: forget it (an answer in flight still completes its callers). */
    void evict(long index) {
        entries.remove(index);
    }

    /** The shared completed answer for {@code route}. */
    private CompletableFuture<Entry> answerFor(ChunkRoute route) {
        if (answers.size() >= MAX_SHARED_ROUTES && !answers.containsKey(route)) {
            answers.clear();
        }
        return answers.computeIfAbsent(route, r -> CompletableFuture.completedFuture(new Allocated(r)));
    }

    /** Number of chunks with a cached answer (allocated or not); for tests and metrics. */
    public int size() {
        return entries.size();
    }

    /** Distinct routes kept for sharing; for tests. */
    int sharedRoutes() {
        return answers.size();
    }

    private boolean expired(CompletableFuture<Entry> f) {
        if (!f.isDone()) {
            return false;
        }
        if (f.isCompletedExceptionally()) {
            return true;
        }
        return f.join() instanceof Unallocated u && nanoClock.getAsLong() - u.fetchedAtNanos() >= unallocatedTtlNanos;
    }
}
