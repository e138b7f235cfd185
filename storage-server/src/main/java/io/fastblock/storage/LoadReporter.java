package io.fastblock.storage;

import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.NodeLoad;
import io.fastblock.protocol.meta.ZkPaths;
import io.fastblock.storage.io.FileSystemSpace;
import io.fastblock.storage.net.InflightRequests;
import java.io.IOException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.nodes.PersistentNode;
import org.apache.zookeeper.CreateMode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's heartbeat: every {@code periodMillis} it writes its free space and queue depths by
 * class ({@link NodeLoad}) to its ephemeral {@code /fastblock/load/{nodeId}}, for the namenode's
 * node list and placement. One ZooKeeper write per period at most, whatever the load.
 */
final class LoadReporter implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LoadReporter.class);

    private final FileSystemSpace disk;
    private final InflightRequests inflight;
    private final PersistentNode node;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "load-reporter");
        t.setDaemon(true);
        return t;
    });

    LoadReporter(CuratorFramework zk, String nodeId, FileSystemSpace disk, InflightRequests inflight, long periodMillis)
            throws IOException {
        this.disk = disk;
        this.inflight = inflight;
        this.node = new PersistentNode(zk, CreateMode.EPHEMERAL, false, ZkPaths.load(nodeId), MetaJson.write(sample()));
        node.start();
        timer.scheduleWithFixedDelay(this::report, periodMillis, periodMillis, TimeUnit.MILLISECONDS);
    }

    NodeLoad sample() throws IOException {
        return new NodeLoad(disk.total(), disk.usable(), inflight.depths(), System.currentTimeMillis());
    }

    private void report() {
        try {
            node.setData(MetaJson.write(sample()));
        } catch (Exception e) {
            // ZooKeeper away or the node not created yet: the next period tries again
            LOG.debug("heartbeat not written: {}", e.toString());
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
        try {
            node.close();
        } catch (IOException e) {
            LOG.debug("closing the heartbeat node: {}", e.toString());
        }
    }
}
