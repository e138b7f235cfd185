package io.fastblock.storage.integrity;

import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.ChunkListRequest;
import io.fastblock.protocol.ChunkListing;
import io.fastblock.protocol.CopyReadRequest;
import io.fastblock.protocol.ReadRequest;
import io.fastblock.protocol.StorageMessage;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.meta.NodeRecord;
import io.fastblock.storage.chain.NodeDirectory;
import io.fastblock.storage.net.StorageClient;
import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoopGroup;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;

/** {@link ReplicaReader} over the storage protocol: one connection per peer address, reopened when it drops. */
public final class NetworkReplicaReader implements ReplicaReader, AutoCloseable {
    private static final long TIMEOUT_SECONDS = 30;

    private final NodeDirectory nodes;
    private final EventLoopGroup group;
    private final ConcurrentHashMap<String, StorageClient> clients = new ConcurrentHashMap<>();

    public NetworkReplicaReader(NodeDirectory nodes, EventLoopGroup group) {
        this.nodes = nodes;
        this.group = group;
    }

    private CompletableFuture<StorageResponse> send(String nodeId, LongFunction<StorageMessage> request) {
        return nodes.lookup(nodeId).thenCompose(node -> {
            if (node == null) {
                return CompletableFuture.failedFuture(new RemoteReadException(io.fastblock.protocol.Status.IO_ERROR,
                        "node " + nodeId + " is not registered"));
            }
            return client(node).send(request, TimeUnit.SECONDS.toMillis(TIMEOUT_SECONDS));
        });
    }

    private StorageClient client(NodeRecord node) {
        String addr = node.host() + ":" + node.port();
        return clients.compute(addr, (k, c) -> c != null && c.isOpen() ? c : StorageClient.connect(group, node.host(), node.port()));
    }

    private static ByteBuf data(String nodeId, StorageResponse r) {
        if (!r.isOk()) {
            r.data().release();
            throw new java.util.concurrent.CompletionException(new RemoteReadException(r.status(),
                    "node " + nodeId + " answered " + r.status() + ": " + r.message()));
        }
        return r.data();
    }

    @Override
    public CompletableFuture<ByteBuf> read(String nodeId, ChainAddress chain, ChunkId chunk, long offset, int length) {
        return send(nodeId, id -> new ReadRequest(id, chain, chunk, offset, length)).thenApply(r -> data(nodeId, r));
    }

    @Override
    public CompletableFuture<ByteBuf> copyRead(String nodeId, ChainAddress chain, ChunkId chunk, long offset, int length) {
        return send(nodeId, id -> new CopyReadRequest(id, chain, chunk, offset, length)).thenApply(r -> data(nodeId, r));
    }

    @Override
    public CompletableFuture<io.fastblock.protocol.Extents> extents(String nodeId, ChainAddress chain, ChunkId chunk,
                                                                    long offset, int length) {
        return send(nodeId, id -> new io.fastblock.protocol.ExtentsRequest(id, chain, chunk, offset, length)).thenApply(r -> {
            ByteBuf d = data(nodeId, r);
            try {
                return io.fastblock.protocol.Extents.decode(d);
            } finally {
                d.release();
            }
        });
    }

    @Override
    public CompletableFuture<io.fastblock.protocol.ChunkChanges> changes(String nodeId, ChainAddress chain, ChunkId chunk,
                                                                         long since) {
        return send(nodeId, id -> new io.fastblock.protocol.ChangesRequest(id, chain, chunk, since)).thenApply(r -> {
            ByteBuf d = data(nodeId, r);
            try {
                return io.fastblock.protocol.ChunkChanges.decode(d);
            } finally {
                d.release();
            }
        });
    }

    @Override
    public CompletableFuture<Long> length(String nodeId, ChainAddress chain, ChunkId chunk) {
        return send(nodeId, id -> new ChunkListRequest(id, chain)).thenApply(r -> {
            ByteBuf d = data(nodeId, r);
            try {
                for (ChunkListing.Entry e : ChunkListing.decode(d).entries()) {
                    if (e.chunk().equals(chunk)) {
                        return e.length();
                    }
                }
                return 0L;
            } finally {
                d.release();
            }
        });
    }

    @Override
    public void close() {
        clients.values().forEach(StorageClient::close);
        clients.clear();
    }
}
