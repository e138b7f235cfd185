package io.fastblock.storage.chain;

import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.ChunkListRequest;
import io.fastblock.protocol.ChunkListing;
import io.fastblock.protocol.CopyReadRequest;
import io.fastblock.protocol.Extents;
import io.fastblock.protocol.ExtentsRequest;
import io.fastblock.protocol.FenceRequest;
import io.fastblock.protocol.OpCode;
import io.fastblock.protocol.PingRequest;
import io.fastblock.protocol.ReadRequest;
import io.fastblock.protocol.Status;
import io.fastblock.protocol.StorageMessage;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.WriteRequest;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.storage.StorageMetrics;
import io.fastblock.storage.log.CorruptRecordException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * What a replica does with a request, independent of sockets. Each group's state and its chain
 * rules live in a {@link GroupReplica}; this class routes requests to them, checks ranges, and
 * records per-operation metrics. Roles come from the node's position in the group's member list:
 * the head (first) assigns sequence numbers, head and middle write in place and forward, the tail
 * (last) stores durably before answering and forwards to a joining node if there is one.
 */
public final class ReplicaService implements AutoCloseable {
    /** Chunks are at most 1 GiB (the namenode's limit), so no offset within one can go beyond. */
    public static final long MAX_CHUNK_BYTES = 1L << 30;
    /** Trims and allocation work in blocks of this size. */
    public static final int BLOCK = 4096;

    private final String nodeId;
    private final StorageMetrics metrics;
    private final ReplicaContext ctx;
    private final ScheduledExecutorService scheduler;
    private final ConcurrentHashMap<Integer, GroupReplica> replicas = new ConcurrentHashMap<>();

    public ReplicaService(String nodeId, GroupLookup groups, Downstream downstream, ReplicaStorage storage,
                          GroupChunks chunks, StorageMetrics metrics, ChainMetrics chainMetrics, ChainLimits limits,
                          Executor blocking) {
        this(nodeId, groups, downstream, storage, chunks, metrics, chainMetrics, limits, blocking,
                new io.fastblock.storage.io.ByteRateLimiter(0));
    }

    /** {@code copyLimiter} paces catch-up copies (bytes per second for the whole node). */
    public ReplicaService(String nodeId, GroupLookup groups, Downstream downstream, ReplicaStorage storage,
                          GroupChunks chunks, StorageMetrics metrics, ChainMetrics chainMetrics, ChainLimits limits,
                          Executor blocking, io.fastblock.storage.io.ByteRateLimiter copyLimiter) {
        this(nodeId, groups, downstream, storage, chunks, metrics, chainMetrics, limits, blocking, copyLimiter,
                DirectAnswers.NONE);
    }

    /** {@code answers}: where this node, as tail, sends the OK of writes whose client asked to be answered directly. */
    public ReplicaService(String nodeId, GroupLookup groups, Downstream downstream, ReplicaStorage storage,
                          GroupChunks chunks, StorageMetrics metrics, ChainMetrics chainMetrics, ChainLimits limits,
                          Executor blocking, io.fastblock.storage.io.ByteRateLimiter copyLimiter, DirectAnswers answers) {
        this.nodeId = nodeId;
        this.metrics = metrics;
        this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "chain-timer");
            t.setDaemon(true);
            return t;
        });
        this.ctx = new ReplicaContext(nodeId, groups, downstream, storage, chunks, chainMetrics, new SequenceClock(),
                new EpochFence(), limits, scheduler, blocking, copyLimiter, answers);
        groups.listen(this::onGroupChanged);
        scheduler.scheduleWithFixedDelay(this::expire, 200, 200, TimeUnit.MILLISECONDS);
    }

    public String nodeId() {
        return nodeId;
    }

    private GroupReplica replica(int groupId) {
        return replicas.computeIfAbsent(groupId, g -> {
            GroupReplica r = new GroupReplica(g, ctx);
            GroupRecord cached = ctx.groups().cached(g);
            if (cached != null) {
                r.offerView(cached);
            }
            return r;
        });
    }

    /** A group record was created or changed in ZooKeeper: every group this node has a part in reacts at once. */
    private void onGroupChanged(GroupRecord record) {
        if (record.positionOf(nodeId) >= 0 || record.isJoining(nodeId) || replicas.containsKey(record.id())) {
            replica(record.id()).offerView(record);
        }
    }

    private void expire() {
        long now = System.nanoTime();
        for (GroupReplica r : replicas.values()) {
            r.expire(now);
        }
    }

    /** This node's position in a group, for tests and operators. */
    public String roleIn(int groupId) {
        GroupReplica r = replicas.get(groupId);
        return r == null ? "none" : r.position().role().metricName();
    }

    /** Writes held in a group's sent list (forwarded, not yet acknowledged). */
    public int sentSize(int groupId) {
        GroupReplica r = replicas.get(groupId);
        return r == null ? 0 : r.sentSize();
    }

    /** Serves one request; takes ownership of any payload. The future always completes with a response. */
    public CompletableFuture<StorageResponse> handle(StorageMessage message, ByteBufAllocator alloc) {
        if (message instanceof PingRequest p) {
            return CompletableFuture.completedFuture(StorageResponse.ok(p.requestId(), OpCode.PING));
        }
        if (message instanceof WriteRequest w) {
            return write(w);
        }
        if (message instanceof ExtentsRequest e) {
            return extents(e, alloc);
        }
        if (message instanceof FenceRequest f) {
            return fence(f);
        }
        if (message instanceof ReadRequest r) {
            return read(r, alloc);
        }
        if (message instanceof io.fastblock.protocol.ChangesRequest c) {
            return changes(c, alloc);
        }
        if (message instanceof CopyReadRequest c) {
            return copyRead(c, alloc);
        }
        if (message instanceof ChunkListRequest l) {
            return chunkList(l, alloc);
        }
        if (message instanceof io.fastblock.protocol.AnswerToRequest a) {
            return CompletableFuture.completedFuture(StorageResponse.error(a.requestId(), a.op(), Status.BAD_REQUEST,
                    "node " + nodeId + ": ANSWER_TO registers a connection; only a network connection can take it"));
        }
        StorageResponse r = (StorageResponse) message;
        r.data().release();
        return CompletableFuture.completedFuture(StorageResponse.error(r.requestId(), r.op(), Status.BAD_REQUEST,
                "node " + nodeId + ": a response is not a request"));
    }

    private String badRange(long offset, long length) {
        if (offset < 0) {
            return "negative offset " + offset;
        }
        if (length < 0) {
            return "negative length " + length;
        }
        if (offset + length > MAX_CHUNK_BYTES) {
            return "range " + offset + "+" + length + " ends beyond the largest chunk size " + MAX_CHUNK_BYTES;
        }
        return null;
    }

    private CompletableFuture<StorageResponse> write(WriteRequest w) {
        ByteBuf data = w.data();
        int length = w.length();
        String bad = length == 0 ? (w.isTrim() ? "empty trim" : "empty write") : badRange(w.offset(), length);
        if (bad == null && w.isTrim() && (w.offset() % BLOCK != 0 || length % BLOCK != 0)) {
            bad = "trim of " + w.offset() + "+" + length + ": offset and length must be multiples of " + BLOCK;
        }
        if (bad != null) {
            data.release();
            return done(StorageResponse.error(w.requestId(), OpCode.WRITE, Status.BAD_REQUEST, "node " + nodeId + ": " + bad));
        }
        long started = System.nanoTime();
        GroupReplica replica = replica(w.chain().groupId());
        String[] role = {"none"};
        CompletableFuture<StorageResponse> result;
        try {
            result = replica.write(w, role);
        } catch (RuntimeException e) {
            result = CompletableFuture.failedFuture(e);
        }
        return result.handle((resp, err) -> {
            if (err != null) {
                // Rejected before the data was handed on: it is still ours to release.
                data.release();
                return failure(w.requestId(), OpCode.WRITE, err);
            }
            if (resp.isOk() && w.isTrim()) {
                metrics.trims.increment();
                metrics.bytesTrimmed.increment(length);
            } else if (resp.isOk()) {
                metrics.writes.increment();
                metrics.bytesWritten.increment(length);
                ctx.metrics().latency("write", role[0]).record(System.nanoTime() - started, TimeUnit.NANOSECONDS);
                ctx.metrics().bytes("write", role[0]).record(length);
            }
            return resp;
        });
    }

    private CompletableFuture<StorageResponse> read(ReadRequest r, ByteBufAllocator alloc) {
        String bad = badRange(r.offset(), r.length());
        if (bad == null && r.wantsExtents() && r.length() > ReadRequest.MAX_LENGTH_WITH_EXTENTS) {
            bad = "read with extents of " + r.length() + " bytes: at most " + ReadRequest.MAX_LENGTH_WITH_EXTENTS
                    + " (the answer carries the extent list too)";
        }
        if (bad != null) {
            return done(StorageResponse.error(r.requestId(), OpCode.READ, Status.BAD_REQUEST, "node " + nodeId + ": " + bad));
        }
        long started = System.nanoTime();
        GroupReplica replica = replica(r.chain().groupId());
        return replica.ensureView(r.chain().chainVersion()).thenCompose(v -> {
            ChainPosition pos = replica.admitRead(r.chain().chainVersion());
            ctx.fence().admitRead(r.chunk().volumeId(), r.chain().leaseEpoch(), nodeId);
            if (r.length() == 0) {
                return done(StorageResponse.ok(r.requestId(), OpCode.READ));
            }
            String role = pos.role().metricName();
            // With extents: the allocation is taken before the bytes, both on this replica's copy;
            // a write landing in between shows in the bytes and, at worst, not yet in the list.
            CompletableFuture<Extents> allocation = r.wantsExtents()
                    ? ctx.storage().extents(r.chain(), r.chunk(), r.offset(), r.length(), pos.tail())
                    : CompletableFuture.completedFuture(null);
            return allocation.thenCompose(extents -> ctx.storage().read(r.chain(), r.chunk(), r.offset(), r.length(),
                    pos.tail(), alloc).thenApply(buf -> {
                metrics.reads.increment();
                metrics.bytesRead.increment(r.length());
                ctx.metrics().latency("read", role).record(System.nanoTime() - started, TimeUnit.NANOSECONDS);
                ctx.metrics().bytes("read", role).record(r.length());
                if (extents == null) {
                    return StorageResponse.ok(r.requestId(), OpCode.READ, buf);
                }
                metrics.extentsRequests.increment();
                ByteBuf head = alloc.buffer(extents.encodedSize());
                extents.encode(head);
                return StorageResponse.ok(r.requestId(), OpCode.READ, alloc.compositeBuffer(2).addComponents(true, head, buf));
            }));
        }).exceptionally(err -> failure(r.requestId(), OpCode.READ, err));
    }

    /** EXTENTS: the allocated ranges of this replica's copy; any member answers, under the read rules. */
    private CompletableFuture<StorageResponse> extents(ExtentsRequest e, ByteBufAllocator alloc) {
        String bad = badRange(e.offset(), e.length());
        if (bad != null) {
            return done(StorageResponse.error(e.requestId(), OpCode.EXTENTS, Status.BAD_REQUEST, "node " + nodeId + ": " + bad));
        }
        GroupReplica replica = replica(e.chain().groupId());
        return replica.ensureView(e.chain().chainVersion()).thenCompose(v -> {
            // Allocation is metadata: not under the lease fence, so a resyncing or joining replica
            // (which holds no lease) can ask the tail, like COPY_READ.
            ChainPosition pos = replica.admitRead(e.chain().chainVersion());
            return ctx.storage().extents(e.chain(), e.chunk(), e.offset(), e.length(), pos.tail());
        }).thenApply(extents -> {
            metrics.extentsRequests.increment();
            ByteBuf out = alloc.buffer(extents.encodedSize());
            extents.encode(out);
            return StorageResponse.ok(e.requestId(), OpCode.EXTENTS, out);
        }).exceptionally(err -> failure(e.requestId(), OpCode.EXTENTS, err));
    }

    /**
     * FENCE: raises the volume's floor at once and answers when every write or trim admitted for
     * it before has completed.
     */
    private CompletableFuture<StorageResponse> fence(FenceRequest f) {
        return ctx.fence().fence(f.volumeId(), f.epoch()).handle((v, err) -> {
            metrics.fences.increment();
            return StorageResponse.ok(f.requestId(), OpCode.FENCE);
        });
    }

    /** The lease-epoch floors of this node (the server feeds it ZooKeeper's recorded fences). */
    public EpochFence fences() {
        return ctx.fence();
    }

    private CompletableFuture<StorageResponse> copyRead(CopyReadRequest c, ByteBufAllocator alloc) {
        String bad = badRange(c.offset(), c.length());
        if (bad != null) {
            return done(StorageResponse.error(c.requestId(), OpCode.COPY_READ, Status.BAD_REQUEST, "node " + nodeId + ": " + bad));
        }
        long started = System.nanoTime();
        GroupReplica replica = replica(c.chain().groupId());
        return replica.ensureView(c.chain().chainVersion()).thenCompose(v -> {
            replica.admitCopySource(c.chain().chainVersion());
            return ctx.storage().read(c.chunk(), c.offset(), c.length(), true, alloc).thenApply(buf -> {
                ctx.metrics().latency("copy_read", "tail").record(System.nanoTime() - started, TimeUnit.NANOSECONDS);
                ctx.metrics().bytes("copy_read", "tail").record(c.length());
                return StorageResponse.ok(c.requestId(), OpCode.COPY_READ, buf);
            });
        }).exceptionally(err -> failure(c.requestId(), OpCode.COPY_READ, err));
    }

    /** CHANGES: the tail tells a returning member which ranges of a chunk changed above its sequence. */
    private CompletableFuture<StorageResponse> changes(io.fastblock.protocol.ChangesRequest c, ByteBufAllocator alloc) {
        if (c.since() < 0) {
            return done(StorageResponse.error(c.requestId(), OpCode.CHANGES, Status.BAD_REQUEST, "node " + nodeId
                    + ": negative sequence " + c.since()));
        }
        long started = System.nanoTime();
        GroupReplica replica = replica(c.chain().groupId());
        return replica.ensureView(c.chain().chainVersion()).thenCompose(v -> {
            replica.admitCopySource(c.chain().chainVersion());
            return ctx.storage().changedSince(c.chain().groupId(), c.chunk(), c.since()).thenApply(changes -> {
                ctx.metrics().latency("changes", "tail").record(System.nanoTime() - started, TimeUnit.NANOSECONDS);
                return StorageResponse.ok(c.requestId(), OpCode.CHANGES, changes.encode(alloc));
            });
        }).exceptionally(err -> failure(c.requestId(), OpCode.CHANGES, err));
    }

    private CompletableFuture<StorageResponse> chunkList(ChunkListRequest l, ByteBufAllocator alloc) {
        long started = System.nanoTime();
        GroupReplica replica = replica(l.chain().groupId());
        return replica.ensureView(l.chain().chainVersion())
                .thenCompose(v -> replica.settleCopySource(l.chain().chainVersion(), l.joiner()))
                .thenApplyAsync(v -> {
            replica.admitCopySource(l.chain().chainVersion());
            List<ChunkListing.Entry> entries = new ArrayList<>();
            for (ChunkId c : ctx.chunks().of(l.chain().groupId())) {
                // The log may reach beyond the chunk file: the recorded bound covers both.
                entries.add(new ChunkListing.Entry(c, Math.max(ctx.storage().length(c), ctx.chunks().bound(c))));
            }
            ctx.metrics().latency("chunk_list", "tail").record(System.nanoTime() - started, TimeUnit.NANOSECONDS);
            return StorageResponse.ok(l.requestId(), OpCode.CHUNK_LIST, new ChunkListing(entries).encode(alloc));
        }, ctx.blocking()).exceptionally(err -> failure(l.requestId(), OpCode.CHUNK_LIST, err));
    }

    private StorageResponse failure(long requestId, OpCode op, Throwable err) {
        Throwable cause = unwrap(err);
        if (cause instanceof RequestRejected rr) {
            return StorageResponse.error(requestId, op, rr.status, rr.getMessage());
        }
        if (cause instanceof CorruptRecordException) {
            return StorageResponse.error(requestId, op, Status.CORRUPT, "node " + nodeId + ": " + cause.getMessage());
        }
        return StorageResponse.error(requestId, op, Status.IO_ERROR, "node " + nodeId + ": " + cause);
    }

    static Throwable unwrap(Throwable err) {
        Throwable t = err;
        while ((t instanceof CompletionException || t instanceof java.util.concurrent.ExecutionException
                || t instanceof java.io.UncheckedIOException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    private static CompletableFuture<StorageResponse> done(StorageResponse r) {
        return CompletableFuture.completedFuture(r);
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
    }
}
