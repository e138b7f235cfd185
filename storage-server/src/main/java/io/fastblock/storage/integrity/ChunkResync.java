package io.fastblock.storage.integrity;

import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.Status;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.storage.chain.GroupLookup;
import io.fastblock.storage.chunk.ChunkStore;
import io.fastblock.storage.chunk.DirtyChunks;
import io.netty.buffer.ByteBuf;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings head/middle chunks back in line with their tail after an unclean shutdown (DESIGN
 * "Head/middle after power loss"). {@link ChunkStore} names the chunks written since its last
 * checkpoint and refuses reads of them meanwhile ({@link ReadRepair} answers those from the
 * tail). For each, this asks the tail how long the chunk is (CHUNK_LIST) and copies the whole
 * chunk (up to the longer of the tail's length and the local file, so local bytes past the
 * tail's end, never acknowledged, become zeros as at the tail) from it with COPY_READ (outside the lease fence) in 1 MiB pieces; bytes written
 * locally since the resync began are kept, being newer. Then the chunk is forced and served
 * again. Where this node is itself the group's tail, the source is its own log ({@link LocalLog}),
 * up to the dirty record's end bound (a power loss may have shortened the local file).
 * A chunk whose tail cannot be reached is retried until it can.
 *
 * <p>A chunk whose entry carries a forced sequence (everything up to it was on disk here) asks
 * the tail which ranges changed above it (CHANGES); when the tail's log can tell, only those
 * ranges are copied (counted in {@code resyncedByDelta}), else the whole chunk.
 */
public final class ChunkResync implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ChunkResync.class);
    static final int PIECE = 1 << 20;

    private final String nodeId;
    private final ChunkStore chunks;
    private final GroupLookup groups;
    private final ReplicaReader peers;
    private final IntegrityMetrics metrics;
    private final long retryMillis;
    private volatile LocalLog localLog;
    private volatile java.util.function.ToIntFunction<ChunkId> groupOf = c -> ChunkStore.UNKNOWN_GROUP;
    private final ScheduledExecutorService retries = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "chunk-resync");
        t.setDaemon(true);
        return t;
    });
    private volatile boolean closed;
    private volatile io.fastblock.storage.io.ByteRateLimiter copyLimiter = new io.fastblock.storage.io.ByteRateLimiter(0);

    public ChunkResync(String nodeId, ChunkStore chunks, GroupLookup groups, ReplicaReader peers, IntegrityMetrics metrics,
                       long retryMillis) {
        this.nodeId = nodeId;
        this.chunks = chunks;
        this.groups = groups;
        this.peers = peers;
        this.metrics = metrics;
        this.retryMillis = retryMillis;
    }

    /**
     * This node's own durable log, for chunks of groups where this node is now the tail and so
     * is its own source (a layout that also keeps the tail's data in place).
     */
    public interface LocalLog {
        /** The newest bytes of the range as the log holds them; the caller owns the buffer. */
        CompletableFuture<ByteBuf> read(ChunkId chunk, long offset, int length);

        /** The allocated ranges as the log sees them, or null where it cannot tell. */
        default CompletableFuture<io.fastblock.protocol.Extents> extents(ChunkId chunk, long offset, int length) {
            return CompletableFuture.completedFuture(null);
        }
    }

    /** Sets the source for chunks of groups this node is tail of; without one those chunks wait. */
    public ChunkResync withLocalLog(LocalLog log) {
        this.localLog = log;
        return this;
    }

    /** Paces the copies (the node's copy budget, shared with catch-up). */
    public ChunkResync withCopyLimiter(io.fastblock.storage.io.ByteRateLimiter limiter) {
        this.copyLimiter = limiter;
        return this;
    }

    /** Completes once the copy budget allows {@code bytes} more. */
    private CompletableFuture<Void> paced(long bytes) {
        long wait = copyLimiter.delayNanos(bytes);
        if (wait <= 0) {
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> go = new CompletableFuture<>();
        try {
            retries.schedule(() -> go.complete(null), wait, TimeUnit.NANOSECONDS);
        } catch (RuntimeException rejected) {
            go.completeExceptionally(rejected);
        }
        return go;
    }

    /** Where to learn the group of a chunk whose writes did not name it (e.g. the chain's record of group chunks). */
    public ChunkResync withGroupResolver(java.util.function.ToIntFunction<ChunkId> resolver) {
        this.groupOf = resolver;
        return this;
    }

    /** Resyncs every pending chunk; completes when all are back in service. */
    public CompletableFuture<Void> start() {
        List<DirtyChunks.Entry> pending = chunks.pendingResync();
        AtomicInteger left = new AtomicInteger(pending.size());
        metrics.resyncPending(left.get());
        if (pending.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        LOG.info("node {}: resyncing {} chunk(s) from their tails", nodeId, pending.size());
        CompletableFuture<?>[] all = new CompletableFuture<?>[pending.size()];
        for (int i = 0; i < all.length; i++) {
            all[i] = untilDone(pending.get(i)).thenRun(() -> metrics.resyncPending(left.decrementAndGet()));
        }
        return CompletableFuture.allOf(all);
    }

    /** Resyncs a chunk held while the node runs ({@link ChunkStore#holdForResync}); completes when it is back in service. */
    public CompletableFuture<Void> resyncHeld(DirtyChunks.Entry e) {
        LOG.info("node {}: resyncing chunk {} from its tail after a failed local write", nodeId, e.chunk());
        return untilDone(e);
    }

    private CompletableFuture<Void> untilDone(DirtyChunks.Entry e) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        attempt(e, done);
        return done;
    }

    private void attempt(DirtyChunks.Entry e, CompletableFuture<Void> done) {
        if (closed) {
            done.completeExceptionally(new IllegalStateException("resync stopped"));
            return;
        }
        resyncOne(e).whenComplete((bytes, err) -> {
            if (err == null) {
                metrics.resyncedChunks.increment();
                metrics.resyncedBytes.increment(bytes);
                LOG.info("node {}: chunk {} resynced from its tail ({} bytes)", nodeId, e.chunk(), bytes);
                done.complete(null);
                return;
            }
            LOG.warn("node {}: resync of chunk {} failed, retrying in {} ms: {}", nodeId, e.chunk(), retryMillis,
                    ReadRepair.unwrap(err).toString());
            try {
                retries.schedule(() -> attempt(e, done), retryMillis, TimeUnit.MILLISECONDS);
            } catch (RuntimeException rejected) {
                done.completeExceptionally(rejected);
            }
        });
    }

    /** One try at one chunk; completes with the bytes copied. */
    CompletableFuture<Long> resyncOne(DirtyChunks.Entry e) {
        ChunkId chunk = e.chunk();
        int groupId = e.groupId() != ChunkStore.UNKNOWN_GROUP ? e.groupId() : groupOf.applyAsInt(chunk);
        if (groupId == ChunkStore.UNKNOWN_GROUP) {
            // Written without a group and in no group's record: a base file the log folded into
            // (its writer forces it) or data no group owns. The rebuilt checksums are all it needs.
            LOG.info("node {}: dirty chunk {} belongs to no known group; released with rebuilt checksums", nodeId, chunk);
            return chunks.finishResync(chunk).thenApply(v -> 0L);
        }
        return groups.refresh(groupId).thenCompose(g -> {
            if (g == null || g.positionOf(nodeId) < 0) {
                // No longer ours to serve: nothing to bring in line; the namenode re-replicates elsewhere.
                LOG.warn("node {}: chunk {} was dirty but group {} no longer lists this node; released without resync",
                        nodeId, chunk, groupId);
                return chunks.finishResync(chunk).thenApply(v -> 0L);
            }
            if (g.tail().equals(nodeId)) {
                LocalLog own = localLog;
                if (own == null) {
                    throw new IllegalStateException("node " + nodeId + " is the tail of group " + g.id()
                            + " and has no local log to resync chunk " + chunk + " from");
                }
                long end = Math.max(e.end(), sizeOf(chunk));
                return copy((off, n) -> own.read(chunk, off, n), (off, n) -> own.extents(chunk, off, n), chunk, 0, end)
                        .thenCompose(bytes -> chunks.finishResync(chunk).thenApply(v -> bytes));
            }
            ChainAddress chain = new ChainAddress(g.id(), g.chainVersion(), 0);
            Source source = (off, n) -> peers.copyRead(g.tail(), chain, chunk, off, n);
            AllocationSource allocation = (off, n) -> peers.extents(g.tail(), chain, chunk, off, n);
            return peers.length(g.tail(), chain, chunk).thenCompose(tailLength -> {
                long local = sizeOf(chunk);
                // Past the tail's end the chunk must read as zeros too: copying zeros over a longer local tail does that.
                long end = Math.max(tailLength, local);
                if (e.forcedSequence() <= 0 || local > tailLength) {
                    return copy(source, allocation, chunk, 0, end);
                }
                // Everything up to the forced sequence is on disk here: the tail's log may name what came after.
                return peers.changes(g.tail(), chain, chunk, e.forcedSequence()).thenCompose(changes -> {
                    if (!changes.complete()) {
                        return copy(source, allocation, chunk, 0, end);
                    }
                    metrics.resyncedByDelta.increment();
                    return copyRanges(source, allocation, chunk, changes.ranges(), 0);
                });
            }).thenCompose(bytes -> chunks.finishResync(chunk).thenApply(v -> bytes));
        });
    }

    private long sizeOf(ChunkId chunk) {
        try {
            return chunks.sizeOf(chunk);
        } catch (java.io.IOException ex) {
            throw new java.io.UncheckedIOException(ex);
        }
    }

    private interface Source {
        CompletableFuture<ByteBuf> read(long offset, int length);
    }

    private interface AllocationSource {
        CompletableFuture<io.fastblock.protocol.Extents> extents(long offset, int length);
    }

    /**
     * Copies {@code [from, end)} piece by piece: the source's allocation of the piece first, then
     * its bytes (laid down, which marks them written), then the local allocation set to what the
     * source said (the allocation is read before the bytes are written, because a tail resyncing
     * from its own log reads the log's gaps from this very chunk file). Blocks written or trimmed
     * here since the resync began keep their state. A source that cannot tell (null) leaves the
     * allocation as the copy made it.
     */
    /** Copies each changed range (a trimmed one too: the tail's zeros and allocation come with it). */
    private CompletableFuture<Long> copyRanges(Source source, AllocationSource allocation, ChunkId chunk,
                                               java.util.List<io.fastblock.protocol.ChunkChanges.Range> ranges, int i) {
        if (i >= ranges.size()) {
            return CompletableFuture.completedFuture(0L);
        }
        io.fastblock.protocol.ChunkChanges.Range r = ranges.get(i);
        return copy(source, allocation, chunk, r.offset(), r.offset() + r.length())
                .thenCompose(n -> copyRanges(source, allocation, chunk, ranges, i + 1).thenApply(rest -> rest + n));
    }

    private CompletableFuture<Long> copy(Source source, AllocationSource allocation, ChunkId chunk, long from, long end) {
        if (from >= end) {
            return CompletableFuture.completedFuture(0L);
        }
        int n = (int) Math.min(PIECE, end - from);
        return paced(n).thenCompose(go -> allocation.extents(from, n)).thenCompose(extents -> source.read(from, n).thenCompose(data -> {
            if (data.readableBytes() != n) {
                data.release();
                throw new java.util.concurrent.CompletionException(new RemoteReadException(Status.IO_ERROR,
                        "resync source answered " + data.readableBytes() + " bytes of chunk " + chunk + " for " + n));
            }
            return chunks.resyncWriteAsync(chunk, from, data).whenComplete((v, err) -> data.release());
        }).thenCompose(v -> extents == null ? CompletableFuture.<Void>completedFuture(null)
                : chunks.resyncAllocationAsync(chunk, from, n, extents)))
                .thenCompose(v -> copy(source, allocation, chunk, from + n, end)).thenApply(rest -> rest + n);
    }

    @Override
    public void close() {
        closed = true;
        retries.shutdownNow();
    }
}
