package io.fastblock.storage.chain;

import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChangesRequest;
import io.fastblock.protocol.ChunkChanges;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.ChunkListRequest;
import io.fastblock.protocol.ChunkListing;
import io.fastblock.protocol.CopyReadRequest;
import io.fastblock.protocol.Extents;
import io.fastblock.protocol.ExtentsRequest;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.meta.CatchUpProgress;
import io.fastblock.protocol.meta.GroupRecord;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One attempt of a joining node to copy a group's data from the tail named in one chain version:
 * CHUNK_LIST, then COPY_READ piece by piece (each written around the ranges forwarded writes
 * have covered since joining), then the caught-up znode. Forwarded writes keep arriving
 * meanwhile through the normal write path. A newer chain version cancels the attempt and starts
 * another (ranges already forwarded stay excluded); a failed request retries after a pause.
 */
final class CatchUp {
    private static final Logger LOG = LoggerFactory.getLogger(CatchUp.class);

    /** The attempt was superseded by a newer chain version or the node stopped joining. */
    static final class Cancelled extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Cancelled() {
            super("catch-up attempt superseded", null, false, false);
        }
    }

    private final GroupReplica replica;
    private final ReplicaContext ctx;
    private final GroupRecord view;
    private final ChainAddress chain;
    private volatile boolean cancelled;
    private long copied;
    /** What this attempt means to copy (its pieces' bytes), for the progress the namenode shows. */
    private long total;
    private long lastReportNanos;
    /** Progress reports go out one after another, so a late one never overwrites a newer one. */
    private CompletableFuture<Void> reports = CompletableFuture.completedFuture(null);
    /** Each chunk's file length here when the copy started: zeros beyond it need not be written. */
    private final Map<ChunkId, Long> localLengths = new java.util.concurrent.ConcurrentHashMap<>();
    /** Each chunk's length as the tail listed it (chunks only this node has are not here). */
    private final Map<ChunkId, Long> tailLengths = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * The group record's stamp ({@link GroupLookup#stamp}) when this attempt began recording the
     * ranges forwarded writes cover; the caught-up znode is created only if the record was not
     * written since.
     */
    private final long stamp;

    CatchUp(GroupReplica replica, ReplicaContext ctx, GroupRecord view, long stamp) {
        this.replica = replica;
        this.ctx = ctx;
        this.view = view;
        this.stamp = stamp;
        this.chain = new ChainAddress(view.id(), view.chainVersion(), 0);
    }

    void cancel() {
        cancelled = true;
    }

    void start() {
        if (cancelled) {
            return;
        }
        LOG.info("node {} group {}: catching up from tail {} at chain version {}", ctx.nodeId(), view.id(), view.tail(),
                view.chainVersion());
        long started = System.nanoTime();
        list().thenCompose(this::copyAll)
                .thenCompose(v -> reports) // the final figures are published before the caught-up znode
                .thenCompose(v -> announce())
                .whenComplete((v, err) -> {
                    Throwable cause = err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
                    if (cause == null) {
                        ctx.metrics().catchUpsCompleted.increment();
                        LOG.info("node {} group {}: caught up from {} ({} bytes copied in {} ms)", ctx.nodeId(), view.id(),
                                view.tail(), copied, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
                    } else if (!(cause instanceof Cancelled) && !cancelled) {
                        LOG.warn("node {} group {}: catch-up from {} failed, retrying: {}", ctx.nodeId(), view.id(), view.tail(),
                                cause.toString());
                        ctx.scheduler().schedule(this::start, ctx.limits().linkRetryMillis() * 4, TimeUnit.MILLISECONDS);
                    }
                });
    }

    private void checkCurrent() {
        if (cancelled || !replica.isCurrent(this)) {
            throw new Cancelled();
        }
    }

    private CompletableFuture<Map<ChunkId, Long>> list() {
        return ctx.downstream().call(view.tail(), id -> new ChunkListRequest(id, chain, ctx.nodeId())).thenApplyAsync(resp -> {
            // Runs on a blocking thread: it stats local chunk files.
            try {
                checkCurrent();
                if (!resp.isOk()) {
                    throw new IllegalStateException("CHUNK_LIST at " + view.tail() + ": " + resp.status() + " " + resp.message());
                }
                Map<ChunkId, Long> lengths = new LinkedHashMap<>();
                tailLengths.clear();
                for (ChunkListing.Entry e : ChunkListing.decode(resp.data()).entries()) {
                    lengths.put(e.chunk(), e.length());
                    tailLengths.put(e.chunk(), e.length());
                }
                // Chunks only this node has for the group hold nothing the tail acknowledged: they
                // are planned too, and given back (see copyAll).
                for (ChunkId c : ctx.chunks().of(view.id())) {
                    lengths.merge(c, 0L, Math::max);
                }
                for (Map.Entry<ChunkId, Long> e : lengths.entrySet()) {
                    e.setValue(Math.max(e.getValue(), ctx.storage().length(e.getKey())));
                }
                return lengths;
            } finally {
                resp.data().release();
            }
        }, ctx.blocking());
    }

    /**
     * One chunk's work: the whole chunk, or (delta) the data ranges to copy and the trimmed ranges to
     * give back. {@code whole} says why a chunk is taken whole (null when it is not; the reasons are
     * {@link ChainMetrics#catchUpWholeChunks}'s).
     */
    private record Plan(ChunkId chunk, long length, ChunkChanges changes, String whole) {
        boolean delta() {
            return whole == null;
        }
    }

    private static Plan takenWhole(ChunkId chunk, long length, String why) {
        return new Plan(chunk, length, null, why);
    }

    private CompletableFuture<Void> copyAll(Map<ChunkId, Long> lengths) {
        localLengths.clear();
        for (ChunkId c : lengths.keySet()) {
            localLengths.put(c, ctx.storage().length(c));
        }
        List<CompletableFuture<Plan>> plans = new ArrayList<>();
        for (Map.Entry<ChunkId, Long> e : lengths.entrySet()) {
            plans.add(plan(e.getKey(), e.getValue()));
        }
        return CompletableFuture.allOf(plans.toArray(CompletableFuture[]::new)).thenCompose(v -> {
            checkCurrent();
            ArrayDeque<ChunkId> chunks = new ArrayDeque<>();
            ArrayDeque<long[]> pieces = new ArrayDeque<>();
            int piece = ctx.limits().copyPieceBytes();
            total = 0;
            int deltas = 0;
            Map<String, Integer> wholeBecause = new java.util.TreeMap<>();
            for (CompletableFuture<Plan> f : plans) {
                Plan p = f.join();
                if (p.delta()) {
                    deltas++;
                    for (ChunkChanges.Range r : p.changes().ranges()) {
                        if (r.hole()) {
                            chunks.add(p.chunk());
                            pieces.add(new long[]{r.offset(), r.length(), TRIM});
                            continue;
                        }
                        for (long off = r.offset(); off < r.offset() + r.length(); off += piece) {
                            long n = Math.min(piece, r.offset() + r.length() - off);
                            chunks.add(p.chunk());
                            pieces.add(new long[]{off, n, COPY});
                            total += n;
                        }
                    }
                    continue;
                }
                wholeBecause.merge(p.whole(), 1, Integer::sum);
                ctx.metrics().catchUpWholeChunks(p.whole()).increment();
                if (NOT_AT_TAIL.equals(p.whole())) {
                    // Nothing in it was acknowledged (for example a deleted volume's chunk whose copy
                    // here outlived a crash, or writes that never reached the tail): given back here
                    // rather than overwritten with zeros read from the tail, a chunk's transfer each.
                    if (p.length() > 0) {
                        chunks.add(p.chunk());
                        pieces.add(new long[]{0, p.length(), TRIM});
                    }
                    continue;
                }
                for (long off = 0; off < p.length(); off += piece) {
                    long n = Math.min(piece, p.length() - off);
                    chunks.add(p.chunk());
                    pieces.add(new long[]{off, n, COPY});
                    total += n;
                }
            }
            // Why chunks go whole tells an operator whether a return costs what it should (a crash
            // leaves the chunks written in its last checkpoint interval without a known sequence).
            LOG.info("node {} group {}: {} chunk(s) to catch up, {} by delta{}, {} bytes to copy", ctx.nodeId(), view.id(),
                    plans.size(), deltas, wholeBecause.isEmpty() ? "" : " (whole: " + wholeBecause + ")", total);
            ctx.metrics().catchUpPlannedBytes.increment(total);
            report(true);
            return next(chunks, pieces);
        });
    }

    private static final String NOT_AT_TAIL = "not_at_tail";
    private static final long COPY = 0;
    private static final long TRIM = 1;

    /**
     * A chunk this node held up to a known sequence when it started, and that the tail lists no
     * shorter than this node's copy, is asked for its changes since; the tail answers "complete"
     * only if its log holds all of them. Anything else is copied whole.
     */
    private CompletableFuture<Plan> plan(ChunkId chunk, long length) {
        long since = ctx.storage().sequenceAtOpen(chunk);
        Long atTail = tailLengths.get(chunk);
        if (atTail == null) {
            return CompletableFuture.completedFuture(takenWhole(chunk, length, NOT_AT_TAIL));
        }
        if (since <= 0) {
            return CompletableFuture.completedFuture(takenWhole(chunk, length, "no_sequence"));
        }
        if (localLengths.getOrDefault(chunk, 0L) > atTail) {
            return CompletableFuture.completedFuture(takenWhole(chunk, length, "longer_here"));
        }
        return ctx.downstream().call(view.tail(), id -> new ChangesRequest(id, chain, chunk, since)).thenApply(resp -> {
            try {
                if (!resp.isOk()) {
                    // An older tail without CHANGES, or it cannot tell: the whole chunk is always right.
                    LOG.info("node {} group {}: CHANGES of {} at {}: {} {}; copying it whole", ctx.nodeId(), view.id(), chunk,
                            view.tail(), resp.status(), resp.message());
                    return takenWhole(chunk, length, "tail_cannot_tell");
                }
                ChunkChanges changes = ChunkChanges.decode(resp.data());
                return changes.complete() ? new Plan(chunk, length, changes, null)
                        : takenWhole(chunk, length, "changes_gone");
            } finally {
                resp.data().release();
            }
        });
    }

    private CompletableFuture<Void> next(ArrayDeque<ChunkId> chunks, ArrayDeque<long[]> pieces) {
        if (pieces.isEmpty()) {
            report(true);
            return CompletableFuture.completedFuture(null);
        }
        checkCurrent();
        ChunkId chunk = chunks.poll();
        long[] p = pieces.poll();
        if (p[2] == TRIM) {
            return replica.applyTrim(this, chunk, p[0], (int) p[1]).thenCompose(none -> next(chunks, pieces));
        }
        // The allocation first, then the bytes: a change at the tail in between is forwarded here
        // too and lands after (or excludes) this piece, so the copy converges either way.
        // The node's copy budget (--copy-rate) paces catch-up and resync together.
        return ctx.paced(p[1]).thenCompose(go -> {
                    checkCurrent();
                    return ctx.downstream().call(view.tail(), id -> new ExtentsRequest(id, chain, chunk, p[0], (int) p[1]));
                })
                .thenCompose(listed -> {
                    Extents allocated;
                    try {
                        if (!listed.isOk()) {
                            throw new IllegalStateException("EXTENTS of " + chunk + " at " + p[0] + " from " + view.tail() + ": "
                                    + listed.status() + " " + listed.message());
                        }
                        allocated = Extents.decode(listed.data());
                    } finally {
                        listed.data().release();
                    }
                    return ctx.downstream().call(view.tail(), id -> new CopyReadRequest(id, chain, chunk, p[0], (int) p[1]))
                            .thenCompose(resp -> {
                                if (!resp.isOk()) {
                                    resp.data().release();
                                    throw new IllegalStateException("COPY_READ of " + chunk + " at " + p[0] + " from "
                                            + view.tail() + ": " + resp.status() + " " + resp.message());
                                }
                                return replica.applyCopy(this, chunk, p[0], resp.data(), localLengths.getOrDefault(chunk, 0L),
                                        allocated);
                            });
                })
                .thenCompose(bytes -> {
                    copied += bytes;
                    ctx.metrics().catchUpBytes.increment(bytes);
                    report(false);
                    return next(chunks, pieces);
                });
    }

    /** Publishes the progress at most about once a second (and at the start and end); failures only logged. */
    private void report(boolean now) {
        long t = System.nanoTime();
        if (!now && t - lastReportNanos < TimeUnit.SECONDS.toNanos(1)) {
            return;
        }
        lastReportNanos = t;
        CatchUpProgress progress = new CatchUpProgress(copied, Math.max(total, copied));
        reports = reports.thenCompose(v -> ctx.groups().reportProgress(view.id(), ctx.nodeId(), progress))
                .exceptionally(err -> {
                    LOG.debug("node {} group {}: catch-up progress not published: {}", ctx.nodeId(), view.id(), err.toString());
                    return null;
                });
    }

    long copiedBytes() {
        return copied;
    }

    /**
     * Creates the caught-up znode, atomically with a check that the group record was not written
     * since this attempt began. A rewrite this node's view did not reflect (the record names it as
     * joining at the same chain version, as before) may hide that it was dropped and named again
     * meanwhile: the tail then ordered writes without forwarding them here, some in ranges already
     * copied or excluded from the copy. The attempt then starts over with nothing excluded.
     */
    private CompletableFuture<Void> announce() {
        checkCurrent();
        return ctx.groups().announceCaughtUp(view.id(), ctx.nodeId(), stamp).thenAccept(announced -> {
            if (!announced) {
                LOG.info("node {} group {}: the group record was written again during the catch-up from {}; starting over",
                        ctx.nodeId(), view.id(), view.tail());
                ctx.metrics().catchUpRestarts.increment();
                replica.restartJoin(this);
                throw new Cancelled();
            }
        });
    }
}
