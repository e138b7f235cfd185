package io.fastblock.storage.chain;

import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.OpCode;
import io.fastblock.protocol.PingRequest;
import io.fastblock.protocol.ReadRequest;
import io.fastblock.protocol.Status;
import io.fastblock.protocol.StorageMessage;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.WriteRequest;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.storage.StorageMetrics;
import io.fastblock.storage.chunk.ChunkStore;
import io.fastblock.storage.log.CorruptRecordException;
import io.fastblock.storage.log.LogStore;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * What a replica does with a request, independent of sockets. Its role in a group is its
 * position in the group's member list: the head (first) assigns sequence numbers, head and
 * middle write in place and forward, the tail (last) appends to the log and answers after the
 * group-commit fsync. Every data request first passes the chain-version and lease-epoch checks.
 */
public final class ReplicaService {
    /** Chunks are at most 1 GiB (the namenode's limit), so no offset within one can go beyond. */
    public static final long MAX_CHUNK_BYTES = 1L << 30;
    private static final int ORDER_STRIPES = 64;

    private final String nodeId;
    private final GroupLookup groups;
    private final Downstream downstream;
    private final ChunkStore chunks;
    private final LogStore log;
    private final StorageMetrics metrics;
    private final EpochFence fence = new EpochFence();
    private final SequenceClock clock = new SequenceClock();
    private final Object[] order = new Object[ORDER_STRIPES];

    private record Role(GroupRecord group, int position) {
        boolean head() {
            return position == 0;
        }

        boolean tail() {
            return position == group.members().size() - 1;
        }

        String successor() {
            return group.members().get(position + 1);
        }
    }

    public ReplicaService(String nodeId, GroupLookup groups, Downstream downstream, ChunkStore chunks, LogStore log,
                          StorageMetrics metrics) {
        this.nodeId = nodeId;
        this.groups = groups;
        this.downstream = downstream;
        this.chunks = chunks;
        this.log = log;
        this.metrics = metrics;
        for (int i = 0; i < order.length; i++) {
            order[i] = new Object();
        }
    }

    public String nodeId() {
        return nodeId;
    }

    /** Serves one request; takes ownership of any payload. The future always completes with a response. */
    public CompletableFuture<StorageResponse> handle(StorageMessage message, ByteBufAllocator alloc) {
        if (message instanceof PingRequest p) {
            return CompletableFuture.completedFuture(StorageResponse.ok(p.requestId(), OpCode.PING));
        }
        if (message instanceof WriteRequest w) {
            return write(w);
        }
        if (message instanceof ReadRequest r) {
            return read(r, alloc);
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
        String bad = w.length() == 0 ? "empty write" : badRange(w.offset(), w.length());
        if (bad != null) {
            data.release();
            return done(StorageResponse.error(w.requestId(), OpCode.WRITE, Status.BAD_REQUEST, "node " + nodeId + ": " + bad));
        }
        CompletableFuture<StorageResponse> result;
        try {
            result = roleFor(w.chain(), w.chunk(), true).thenCompose(role -> {
                if (role.head() && w.forwarded()) {
                    throw new RequestRejected(Status.BAD_REQUEST, "node " + nodeId + " is the head of group "
                            + role.group().id() + " but received a forwarded write");
                }
                if (!role.head() && !w.forwarded()) {
                    throw new RequestRejected(Status.BAD_REQUEST, "node " + nodeId + " is not the head of group "
                            + role.group().id() + "; writes enter the chain at " + role.group().head());
                }
                if (role.tail()) {
                    return CompletableFuture.completedFuture(role);
                }
                return downstream.prepare(role.successor()).thenApply(ignored -> role);
            }).thenCompose(role -> apply(w, role));
        } catch (RuntimeException e) {
            result = CompletableFuture.failedFuture(e);
        }
        return result.handle((resp, err) -> {
            if (err != null) {
                // Rejected before the data was handed on: it is still ours to release.
                data.release();
                return failure(w.requestId(), OpCode.WRITE, err);
            }
            return resp;
        });
    }

    /** Hands the write to the local store and the successor; from here on the stores own the data. */
    private CompletableFuture<StorageResponse> apply(WriteRequest w, Role role) {
        ByteBuf data = w.data();
        int length = data.readableBytes();
        CompletableFuture<Void> local;
        CompletableFuture<StorageResponse> remote;
        // One order for the sequence number, the local apply and the send downstream, so every
        // replica applies overlapping writes to a chunk in the same order.
        synchronized (order[Math.floorMod(w.chunk().hashCode(), ORDER_STRIPES)]) {
            long sequence = role.head() ? clock.next() : w.sequence();
            if (role.tail()) {
                local = log.append(w.chunk(), w.offset(), sequence, data.retain());
                remote = null;
            } else {
                local = chunks.writeAsync(w.chunk(), w.offset(), data.retainedDuplicate());
                remote = downstream.forward(role.successor(), w.forward(0, sequence, data.retainedDuplicate()));
            }
        }
        data.release();
        CompletableFuture<StorageResponse> localResult = local.handle((v, err) -> err == null ? null
                : StorageResponse.error(w.requestId(), OpCode.WRITE, Status.IO_ERROR,
                "node " + nodeId + ": local write failed: " + unwrap(err)));
        CompletableFuture<StorageResponse> all = remote == null ? localResult
                : localResult.thenCombine(remote, (localError, down) -> {
                    if (!down.isOk()) {
                        down.data().release();
                        // The failing node named itself in its message; pass status and text up unchanged.
                        return StorageResponse.error(w.requestId(), OpCode.WRITE, down.status(), down.message());
                    }
                    down.data().release();
                    return localError;
                });
        return all.thenApply(error -> {
            if (error != null) {
                return error;
            }
            metrics.writes.increment();
            metrics.bytesWritten.increment(length);
            return StorageResponse.ok(w.requestId(), OpCode.WRITE);
        });
    }

    private CompletableFuture<StorageResponse> read(ReadRequest r, ByteBufAllocator alloc) {
        String bad = badRange(r.offset(), r.length());
        if (bad != null) {
            return done(StorageResponse.error(r.requestId(), OpCode.READ, Status.BAD_REQUEST, "node " + nodeId + ": " + bad));
        }
        return roleFor(r.chain(), r.chunk(), false).thenCompose(role -> {
            if (r.length() == 0) {
                return CompletableFuture.completedFuture(StorageResponse.ok(r.requestId(), OpCode.READ));
            }
            CompletableFuture<ByteBuf> data = role.tail()
                    ? log.readAsync(r.chunk(), r.offset(), r.length(), alloc)
                    : chunks.readAsync(r.chunk(), r.offset(), r.length(), alloc);
            return data.thenApply(buf -> {
                metrics.reads.increment();
                metrics.bytesRead.increment(r.length());
                return StorageResponse.ok(r.requestId(), OpCode.READ, buf);
            });
        }).exceptionally(err -> failure(r.requestId(), OpCode.READ, err));
    }

    /** This node's role for the request's group, after the chain-version and lease checks. */
    private CompletableFuture<Role> roleFor(ChainAddress chain, ChunkId chunk, boolean write) {
        GroupRecord cached = groups.cached(chain.groupId());
        CompletableFuture<GroupRecord> current = cached != null && cached.chainVersion() == chain.chainVersion()
                ? CompletableFuture.completedFuture(cached)
                : groups.refresh(chain.groupId());
        return current.thenApply(g -> {
            if (g == null) {
                throw new RequestRejected(Status.UNKNOWN_GROUP, "node " + nodeId + ": group " + chain.groupId() + " is unknown");
            }
            if (g.chainVersion() != chain.chainVersion()) {
                throw new RequestRejected(Status.STALE_CHAIN, "node " + nodeId + ": group " + g.id() + " is at chain version "
                        + g.chainVersion() + ", request has " + chain.chainVersion());
            }
            int position = g.positionOf(nodeId);
            if (position < 0) {
                throw new RequestRejected(Status.NOT_MEMBER, "node " + nodeId + " is not a member of group " + g.id()
                        + " " + g.members());
            }
            long newer = fence.admit(chunk.volumeId(), chain.leaseEpoch());
            if (newer >= 0) {
                throw new RequestRejected(Status.STALE_EPOCH, "node " + nodeId + ": lease epoch " + chain.leaseEpoch()
                        + " of volume " + chunk.volumeId() + " is older than " + newer);
            }
            return new Role(g, position);
        });
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

    private static Throwable unwrap(Throwable err) {
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
}
