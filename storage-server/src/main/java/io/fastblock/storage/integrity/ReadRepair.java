package io.fastblock.storage.integrity;

import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.storage.chunk.BlockRange;
import io.fastblock.storage.chunk.ChunkResyncingException;
import io.fastblock.storage.chunk.ChunkStore;
import io.fastblock.storage.chunk.CorruptBlockException;
import io.netty.buffer.ByteBuf;
import java.io.IOException;
import io.netty.buffer.ByteBufAllocator;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads that survive a bad local copy. A replica reads its own copy; if a block fails its CRC32C
 * the read is answered with the same range from another member of the group (the tail first: it
 * holds every acknowledged write), the bad blocks are rewritten locally with the good bytes, and
 * the repair is counted. A chunk still resyncing after a power loss is read from its tail (the
 * tail itself waits for its resync).
 * Corruption in the tail's log (found by the log's scrubber) is repaired by appending the good
 * bytes again.
 *
 * <p>The good copy is fetched with the client's own chain address (chain version and lease
 * epoch), so the remote replica applies the same fences it would to the client.
 */
public final class ReadRepair implements io.fastblock.storage.chain.ReplicaStorage.RepairingReads {
    private static final Logger LOG = LoggerFactory.getLogger(ReadRepair.class);
    /** Remote reads are split into pieces no larger than this (well under a frame's data limit). */
    static final int PIECE = 4 << 20;

    /**
     * Where repaired log data goes: normally {@code LogStore::rewrite}, which indexes it only where
     * the bad run is still read. Takes ownership of {@code data}.
     */
    public interface LogRewriter {
        CompletableFuture<Void> rewrite(ChunkId chunk, long offset, long sequence, long originSegment, long originPosition,
                                        ByteBuf data);
    }

    private final String nodeId;
    private final ChunkStore chunks;
    private final ReplicaReader peers;
    private final IntegrityMetrics metrics;
    /** Whether a tail's chunk files hold what its log holds (the log+in-place layout); set once at start-up. */
    private volatile boolean tailWritesInPlace = true;
    /** The lease epoch this node's fences are at for a volume (what a lease-free repair reads under). */
    private volatile java.util.function.LongUnaryOperator leaseEpochOf = volume -> 0;

    public ReadRepair(String nodeId, ChunkStore chunks, ReplicaReader peers, IntegrityMetrics metrics) {
        this.nodeId = nodeId;
        this.chunks = chunks;
        this.peers = peers;
        this.metrics = metrics;
    }

    public IntegrityMetrics metrics() {
        return metrics;
    }

    /**
     * {@code false} under the log layout: the tail does not write its chunk files, so their bytes
     * may be older than its log's and are no source for repairing the log.
     */
    public ReadRepair tailWritesInPlace(boolean inPlace) {
        this.tailWritesInPlace = inPlace;
        return this;
    }

    /**
     * The fence epoch of each volume on this node (its recorded floor): a log repair holds no
     * lease, and a member whose fence has been raised refuses reads under an older epoch.
     */
    public ReadRepair leaseEpochs(java.util.function.LongUnaryOperator epochOf) {
        this.leaseEpochOf = epochOf;
        return this;
    }

    /**
     * The read path's entry: like {@link #read(GroupRecord, ChainAddress, ChunkId, long, int, ByteBufAllocator)}
     * with the group taken from {@code groups} (the caller has just checked the request's chain
     * version against it, so the cached record is current).
     */
    /**
     * The allocation of a chunk whose local copy is resyncing: the tail's (EXTENTS is outside the
     * lease fence), or this node's own once resynced if it is the tail.
     */
    @Override
    public CompletableFuture<io.fastblock.protocol.Extents> extents(io.fastblock.storage.chain.GroupLookup groups,
                                                                    ChainAddress chain, ChunkId chunk, long offset, int length) {
        GroupRecord g = groups.cached(chain.groupId());
        if (g == null || g.tail().equals(nodeId) || !chunks.isResyncing(chunk)) {
            return chunks.whenResynced(chunk).thenCompose(v -> chunks.extentsAsync(chunk, offset, length));
        }
        metrics.remoteReads.increment();
        return peers.extents(g.tail(), chain, chunk, offset, length).thenCompose(e -> e != null
                ? CompletableFuture.completedFuture(e)
                : chunks.whenResynced(chunk).thenCompose(v -> chunks.extentsAsync(chunk, offset, length)));
    }

    @Override
    public CompletableFuture<ByteBuf> read(io.fastblock.storage.chain.GroupLookup groups, ChainAddress chain, ChunkId chunk,
                                           long offset, int length, ByteBufAllocator alloc) {
        GroupRecord g = groups.cached(chain.groupId());
        if (g == null) {
            return groups.refresh(chain.groupId()).thenCompose(fresh -> fresh == null
                    ? chunks.readAsync(chunk, offset, length, alloc)
                    : read(fresh, chain, chunk, offset, length, alloc));
        }
        return read(g, chain, chunk, offset, length, alloc);
    }

    /**
     * Reads {@code [offset, offset+length)} of the chunk from this node's in-place copy, repairing
     * it from another member of {@code group} if it is bad. The caller owns the buffer.
     */
    public CompletableFuture<ByteBuf> read(GroupRecord group, ChainAddress chain, ChunkId chunk, long offset, int length,
                                           ByteBufAllocator alloc) {
        return chunks.readAsync(chunk, offset, length, alloc).handle((buf, err) -> {
            if (err == null) {
                return CompletableFuture.completedFuture(buf);
            }
            Throwable cause = unwrap(err);
            if (cause instanceof ChunkResyncingException) {
                if (group.tail().equals(nodeId)) {
                    // The tail is the copy everyone else trusts: it waits for its own resync (from its log).
                    return chunks.whenResynced(chunk).thenCompose(v -> chunks.readAsync(chunk, offset, length, alloc));
                }
                metrics.remoteReads.increment();
                return fetch(tailFirst(group, false), chain, chunk, offset, length, alloc);
            }
            if (cause instanceof CorruptBlockException bad) {
                return repairAndAnswer(group, chain, chunk, offset, length, bad, alloc);
            }
            return CompletableFuture.<ByteBuf>failedFuture(cause);
        }).thenCompose(Function.identity());
    }

    /**
     * A tail of the log layout found its own copy of the range bad (a log record failing its
     * check, or a bad block of the chunk file under the log): answers from the other members,
     * predecessor first, under the client's chain address. The log's scrubber repairs the record.
     */
    @Override
    public CompletableFuture<ByteBuf> fromOtherMembers(io.fastblock.storage.chain.GroupLookup groups, ChainAddress chain,
                                                       ChunkId chunk, long offset, int length, IOException bad,
                                                       ByteBufAllocator alloc) {
        metrics.corruptFound.increment();
        LOG.warn("node {}: {}; answering from another replica", nodeId, bad.getMessage());
        GroupRecord g = groups.cached(chain.groupId());
        CompletableFuture<GroupRecord> group = g != null ? CompletableFuture.completedFuture(g) : groups.refresh(chain.groupId());
        return group.thenCompose(record -> {
            if (record == null) {
                return CompletableFuture.<ByteBuf>failedFuture(bad);
            }
            metrics.remoteReads.increment();
            return fetch(tailFirst(record, true), chain, chunk, offset, length, alloc);
        });
    }

    private CompletableFuture<ByteBuf> repairAndAnswer(GroupRecord group, ChainAddress chain, ChunkId chunk, long offset,
                                                      int length, CorruptBlockException bad, ByteBufAllocator alloc) {
        metrics.corruptFound.increment();
        LOG.warn("node {}: {}; answering from another replica and repairing", nodeId, bad.getMessage());
        long from = Math.min(offset, bad.offset());
        long to = Math.max(offset + length, bad.offset() + bad.length());
        ChunkStore.WriteWatch watch = chunks.watch(chunk);
        return fetch(tailFirst(group, true), chain, chunk, from, (int) (to - from), alloc).thenCompose(good -> {
            metrics.remoteReads.increment();
            ByteBuf blocks = good.retainedSlice(good.readerIndex() + (int) (bad.offset() - from), (int) bad.length());
            return chunks.repairAsync(watch, bad.offset(), blocks).handle((repaired, err) -> {
                blocks.release();
                if (err != null) {
                    LOG.warn("node {}: repair of chunk {} failed: {}", nodeId, chunk, unwrap(err).toString());
                } else {
                    counted(repaired);
                }
                return good.retainedSlice(good.readerIndex() + (int) (offset - from), length);
            }).whenComplete((v, e) -> good.release());
        });
    }

    private void counted(long repairedBytes) {
        if (repairedBytes > 0) {
            metrics.repairs.increment();
            metrics.repairedBytes.increment(repairedBytes);
        }
    }

    /**
     * Repairs bad stretches the scrubber found in a chunk: fetches each from another member (the
     * tail with COPY_READ, as the scrubber holds no lease; others with READ under {@code chain})
     * and rewrites the blocks that are still bad. Completes with the bytes repaired.
     */
    public CompletableFuture<Long> repairChunk(GroupRecord group, ChainAddress chain, ChunkId chunk, List<BlockRange> bad,
                                               ByteBufAllocator alloc) {
        CompletableFuture<Long> total = CompletableFuture.completedFuture(0L);
        for (BlockRange r : bad) {
            total = total.thenCompose(sum -> {
                metrics.corruptFound.increment();
                ChunkStore.WriteWatch watch = chunks.watch(chunk);
                return fetch(tailFirst(group, true), group.tail(), chain, chunk, r.offset(), (int) r.length(), alloc)
                        .thenCompose(good -> chunks.repairAsync(watch, r.offset(), good)
                                .whenComplete((n, e) -> good.release()))
                        .thenApply(n -> {
                            counted(n);
                            return sum + n;
                        });
            });
        }
        return total;
    }

    /**
     * Repairs a log extent that failed its check (reported by the log's scrubber): takes the
     * good bytes from this node's own in-place copy when it has a good one (only the log+in-place
     * layout keeps the tail's data in place too), else from the other members, predecessor first,
     * read under this node's fence epoch for the volume; and appends them to the log again, which
     * makes the bad record dead. Counted as a repair.
     */
    public CompletableFuture<Void> repairLogExtent(GroupRecord group, ChunkId chunk, io.fastblock.storage.log.Extent bad,
                                                   LogRewriter rewrite) {
        long offset = bad.chunkOffset();
        int length = bad.length();
        metrics.corruptFound.increment();
        CompletableFuture<ByteBuf> local = CompletableFuture.supplyAsync(() -> {
            try {
                if (!tailWritesInPlace) {
                    throw new java.io.IOException("the log layout's tail does not keep its chunk files current");
                }
                if (chunks.isResyncing(chunk)) {
                    throw new java.io.IOException("the in-place copy of chunk " + chunk + " is resyncing");
                }
                if (chunks.sizeOf(chunk) < offset + length) {
                    throw new java.io.IOException("the in-place copy of chunk " + chunk + " does not reach " + (offset + length));
                }
                return chunks.read(chunk, offset, length, io.netty.buffer.PooledByteBufAllocator.DEFAULT);
            } catch (java.io.IOException e) {
                throw new CompletionException(e);
            }
        });
        return local.handle((buf, err) -> {
            if (err == null) {
                return CompletableFuture.completedFuture(buf);
            }
            LOG.info("node {}: no good local copy of chunk {} {}+{} ({}); fetching it from the predecessor", nodeId, chunk,
                    offset, length, unwrap(err).toString());
            long epoch = Math.max(0, leaseEpochOf.applyAsLong(chunk.volumeId()));
            return fetch(tailFirst(group, true), new ChainAddress(group.id(), group.chainVersion(), epoch), chunk, offset, length,
                    io.netty.buffer.PooledByteBufAllocator.DEFAULT);
        }).thenCompose(Function.identity())
                .thenCompose(good -> rewrite.rewrite(chunk, offset, bad.sequence(), bad.segment(), bad.recordPosition(), good))
                .thenRun(() -> counted(length));
    }

    /** Other members, tail first then back towards the head (the tail holds every acknowledged write). */
    private List<String> tailFirst(GroupRecord group, boolean anyMember) {
        List<String> out = new ArrayList<>();
        List<String> m = group.members();
        for (int i = m.size() - 1; i >= 0; i--) {
            if (!m.get(i).equals(nodeId)) {
                out.add(m.get(i));
            }
            if (!anyMember && !out.isEmpty()) {
                break;
            }
        }
        return out;
    }

    /** Fetches the range from the first source that answers, in pieces; the caller owns the buffer. */
    private CompletableFuture<ByteBuf> fetch(List<String> sources, ChainAddress chain, ChunkId chunk, long offset, int length,
                                             ByteBufAllocator alloc) {
        return fetch(sources, null, chain, chunk, offset, length, alloc);
    }

    /**
     * Fetches the range from the first source that answers, in pieces; the caller owns the buffer.
     * With {@code leaseFreeTail} set (work that holds no lease: scrub, resync) that node is read
     * with COPY_READ, outside the lease fence; every other source gets a normal READ.
     */
    private CompletableFuture<ByteBuf> fetch(List<String> sources, String leaseFreeTail, ChainAddress chain, ChunkId chunk,
                                             long offset, int length, ByteBufAllocator alloc) {
        if (sources.isEmpty()) {
            return CompletableFuture.failedFuture(new RemoteReadException(io.fastblock.protocol.Status.IO_ERROR,
                    "node " + nodeId + ": no other replica of chunk " + chunk + " to read from"));
        }
        boolean copy = sources.get(0).equals(leaseFreeTail);
        return fetchFrom(sources.get(0), copy, chain, chunk, offset, length, alloc).handle((buf, err) -> {
            if (err == null) {
                return CompletableFuture.completedFuture(buf);
            }
            LOG.warn("node {}: reading chunk {} from {} failed: {}", nodeId, chunk, sources.get(0), unwrap(err).toString());
            if (sources.size() == 1) {
                return CompletableFuture.<ByteBuf>failedFuture(unwrap(err));
            }
            return fetch(sources.subList(1, sources.size()), leaseFreeTail, chain, chunk, offset, length, alloc);
        }).thenCompose(Function.identity());
    }

    private CompletableFuture<ByteBuf> fetchFrom(String source, boolean copy, ChainAddress chain, ChunkId chunk, long offset,
                                                 int length, ByteBufAllocator alloc) {
        if (length <= PIECE) {
            return piece(source, copy, chain, chunk, offset, length);
        }
        ByteBuf out = alloc.directBuffer(length, length);
        CompletableFuture<Void> chain0 = CompletableFuture.completedFuture(null);
        for (int at = 0; at < length; at += PIECE) {
            int pos = at;
            int n = Math.min(PIECE, length - at);
            chain0 = chain0.thenCompose(v -> piece(source, copy, chain, chunk, offset + pos, n)).thenAccept(piece -> {
                try {
                    out.setBytes(pos, piece, piece.readerIndex(), n);
                } finally {
                    piece.release();
                }
            });
        }
        return chain0.handle((v, err) -> {
            if (err != null) {
                out.release();
                throw new CompletionException(unwrap(err));
            }
            return out.writerIndex(length);
        });
    }

    private CompletableFuture<ByteBuf> piece(String source, boolean copy, ChainAddress chain, ChunkId chunk, long offset, int length) {
        return copy ? peers.copyRead(source, chain, chunk, offset, length) : peers.read(source, chain, chunk, offset, length);
    }

    static Throwable unwrap(Throwable err) {
        Throwable t = err;
        while ((t instanceof CompletionException || t instanceof ExecutionException || t instanceof java.io.UncheckedIOException)
                && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }
}
