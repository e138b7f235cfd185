package io.fastblock.storage.integrity;

import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.Status;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.storage.chain.GroupLookup;
import io.fastblock.storage.chunk.ChunkStore;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Other replicas as real {@link ChunkStore}s in this process, reached without sockets: the
 * integrity logic's collaborators for tests that need no network. Counts the reads each node
 * served and can make a node unreachable.
 */
final class StoreBackedReplicas implements ReplicaReader, GroupLookup {
    final Map<String, ChunkStore> stores = new ConcurrentHashMap<>();
    final Map<String, AtomicInteger> served = new ConcurrentHashMap<>();
    final Map<Integer, GroupRecord> groups = new ConcurrentHashMap<>();
    final Map<String, Boolean> down = new ConcurrentHashMap<>();

    private CompletableFuture<ByteBuf> serve(String nodeId, ChunkId chunk, long offset, int length) {
        if (down.getOrDefault(nodeId, false) || !stores.containsKey(nodeId)) {
            return CompletableFuture.failedFuture(new RemoteReadException(Status.IO_ERROR, "node " + nodeId + " unreachable"));
        }
        served.computeIfAbsent(nodeId, k -> new AtomicInteger()).incrementAndGet();
        return stores.get(nodeId).readAsync(chunk, offset, length, PooledByteBufAllocator.DEFAULT);
    }

    @Override
    public CompletableFuture<ByteBuf> read(String nodeId, ChainAddress chain, ChunkId chunk, long offset, int length) {
        return serve(nodeId, chunk, offset, length);
    }

    @Override
    public CompletableFuture<ByteBuf> copyRead(String nodeId, ChainAddress chain, ChunkId chunk, long offset, int length) {
        return serve(nodeId, chunk, offset, length);
    }

    @Override
    public CompletableFuture<Long> length(String nodeId, ChainAddress chain, ChunkId chunk) {
        if (down.getOrDefault(nodeId, false)) {
            return CompletableFuture.failedFuture(new RemoteReadException(Status.IO_ERROR, "node " + nodeId + " unreachable"));
        }
        try {
            return CompletableFuture.completedFuture(stores.get(nodeId).sizeOf(chunk));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    int served(String nodeId) {
        AtomicInteger n = served.get(nodeId);
        return n == null ? 0 : n.get();
    }

    @Override
    public GroupRecord cached(int groupId) {
        return groups.get(groupId);
    }

    @Override
    public CompletableFuture<GroupRecord> refresh(int groupId) {
        return CompletableFuture.completedFuture(groups.get(groupId));
    }
}
