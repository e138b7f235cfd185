package io.fastblock.storage.chain;

import io.fastblock.protocol.Status;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.WriteRequest;
import io.fastblock.protocol.meta.NodeRecord;
import io.fastblock.storage.net.StorageClient;
import io.netty.channel.EventLoopGroup;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/** Forwards writes to successors over one connection per successor address. */
public final class ChainForwarder implements Downstream, AutoCloseable {
    private static final long TIMEOUT_SECONDS = 30;

    private final String self;
    private final NodeDirectory nodes;
    private final EventLoopGroup group;
    private final ConcurrentHashMap<String, StorageClient> clients = new ConcurrentHashMap<>();

    public ChainForwarder(String self, NodeDirectory nodes, EventLoopGroup group) {
        this.self = self;
        this.nodes = nodes;
        this.group = group;
    }

    @Override
    public CompletableFuture<Void> prepare(String nodeId) {
        return nodes.lookup(nodeId).thenAccept(r -> {
            if (r == null) {
                throw new RequestRejected(Status.IO_ERROR, "node " + self + ": successor " + nodeId + " is not registered");
            }
        });
    }

    @Override
    public CompletableFuture<StorageResponse> forward(String nodeId, WriteRequest write) {
        NodeRecord node = nodes.lookup(nodeId).getNow(null);
        if (node == null) {
            write.data().release();
            return CompletableFuture.completedFuture(StorageResponse.error(write.requestId(), write.op(), Status.IO_ERROR,
                    "node " + self + ": successor " + nodeId + " has no known address"));
        }
        String addr = node.host() + ":" + node.port();
        StorageClient client = clients.compute(addr, (k, c) -> c != null && c.isOpen() ? c
                : StorageClient.connect(group, node.host(), node.port()));
        return client.send(id -> new WriteRequest(id, write.flags(), write.chain(), write.chunk(), write.offset(),
                        write.sequence(), write.data()))
                .orTimeout(TIMEOUT_SECONDS, TimeUnit.SECONDS)
                .handle((resp, err) -> {
                    if (err == null) {
                        return resp;
                    }
                    Throwable cause = err.getCause() != null && err instanceof java.util.concurrent.CompletionException ? err.getCause() : err;
                    return StorageResponse.error(write.requestId(), write.op(), Status.IO_ERROR, "node " + self
                            + ": forwarding to successor " + nodeId + " at " + addr + " failed: " + cause);
                });
    }

    @Override
    public void close() {
        for (StorageClient c : clients.values()) {
            c.close();
        }
        clients.clear();
    }
}
