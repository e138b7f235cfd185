package io.fastblock.storage.chain;

import io.fastblock.protocol.OpCode;
import io.fastblock.protocol.Status;
import io.fastblock.protocol.StorageMessage;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.WriteRequest;
import io.fastblock.protocol.meta.NodeRecord;
import io.fastblock.storage.net.StorageClient;
import io.netty.channel.EventLoopGroup;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongFunction;

/** Forwards writes to successors (and catch-up calls to tails) over one connection per node address. */
public final class ChainForwarder implements Downstream, AutoCloseable {
    private final String self;
    private final NodeDirectory nodes;
    private final EventLoopGroup group;
    private final long timeoutMillis;
    private final ConcurrentHashMap<String, StorageClient> clients = new ConcurrentHashMap<>();

    public ChainForwarder(String self, NodeDirectory nodes, EventLoopGroup group, long timeoutMillis) {
        this.self = self;
        this.nodes = nodes;
        this.group = group;
        this.timeoutMillis = timeoutMillis;
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
        return call(nodeId, write::withRequestId, write);
    }

    @Override
    public CompletableFuture<StorageResponse> call(String nodeId, LongFunction<StorageMessage> build) {
        return call(nodeId, build, null);
    }

    private CompletableFuture<StorageResponse> call(String nodeId, LongFunction<StorageMessage> build, WriteRequest owned) {
        NodeRecord node = nodes.lookup(nodeId).getNow(null);
        if (node == null) {
            if (owned != null) {
                owned.data().release();
            }
            nodes.refresh(nodeId);
            return CompletableFuture.completedFuture(StorageResponse.error(0, OpCode.PING, Status.IO_ERROR,
                    "node " + self + ": " + nodeId + " has no known address"));
        }
        String addr = node.host() + ":" + node.port();
        StorageClient client = clients.compute(addr, (k, c) -> c != null && c.isOpen() ? c
                : StorageClient.connect(group, node.host(), node.port()));
        return client.send(build, timeoutMillis)
                .handle((resp, err) -> {
                    if (err == null) {
                        return resp;
                    }
                    // The node may have restarted elsewhere (a new port): look its record up again.
                    nodes.refresh(nodeId);
                    Throwable cause = err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
                    return StorageResponse.error(0, OpCode.PING, Status.IO_ERROR, "node " + self
                            + ": request to " + nodeId + " at " + addr + " failed: " + cause);
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
