package io.fastblock.storage.chain;

import io.fastblock.protocol.meta.NodeRecord;
import io.fastblock.protocol.meta.ZkPaths;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.apache.curator.framework.CuratorFramework;

/** Addresses of storage servers, from {@code /fastblock/nodes}. */
public final class NodeDirectory implements AutoCloseable {
    private final ZkRecordCache<NodeRecord> nodes;

    public NodeDirectory(CuratorFramework zk, Executor blocking) {
        this.nodes = new ZkRecordCache<>(zk, ZkPaths.NODES, NodeRecord.class, blocking);
    }

    public NodeDirectory start() {
        nodes.start();
        return this;
    }

    /** The node's record, from the cache or else read from ZooKeeper; null if it is not registered. */
    public CompletableFuture<NodeRecord> lookup(String nodeId) {
        NodeRecord r = nodes.cached(nodeId);
        return r != null ? CompletableFuture.completedFuture(r) : nodes.fetch(nodeId);
    }

    public CompletableFuture<NodeRecord> refresh(String nodeId) {
        return nodes.fetch(nodeId);
    }

    @Override
    public void close() {
        nodes.close();
    }
}
