package io.fastblock.namenode.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.fastblock.namenode.NameNode;
import io.fastblock.namenode.NameNodeConfig;
import io.fastblock.namenode.TestHttp;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.NodeLoad;
import io.fastblock.protocol.meta.NodeRecord;
import io.fastblock.protocol.meta.ZkPaths;
import java.nio.file.Path;
import java.util.Map;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Storage heartbeats (/fastblock/load) shown by GET /v1/nodes, over real HTTP and ZooKeeper. */
class NodeLoadTest {
    private static final long GIB = 1L << 30;

    @TempDir
    Path dir;

    @Test
    void nodesShowTheirLastHeartbeatAndItsFreeSpace() throws Exception {
        try (TestingServer zkServer = new TestingServer(true);
             CuratorFramework storageSide = CuratorFrameworkFactory.newClient(zkServer.getConnectString(),
                     new RetryOneTime(100));
             NameNode namenode = NameNode.start(NameNodeConfig.fromArgs("--data-dir=" + dir, "--http-port=0",
                     "--zk=" + zkServer.getConnectString()))) {
            storageSide.start();
            for (int i = 1; i <= 3; i++) {
                storageSide.create().creatingParentsIfNeeded().forPath(ZkPaths.node("s" + i),
                        MetaJson.write(new NodeRecord("s" + i, "127.0.0.1", 9400 + i, 100 * GIB, 100 * GIB)));
            }
            storageSide.create().withMode(CreateMode.EPHEMERAL).forPath(ZkPaths.live("s1"));
            storageSide.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(ZkPaths.load("s1"),
                    MetaJson.write(new NodeLoad(100 * GIB, 37 * GIB,
                            Map.of(NodeLoad.READ, 3, NodeLoad.WRITE, 9, NodeLoad.CATCH_UP, 1, NodeLoad.OTHER, 0),
                            1_790_000_000_000L)));
            storageSide.create().withMode(CreateMode.EPHEMERAL).forPath(ZkPaths.live("s2")); // live, no heartbeat yet
            storageSide.create().withMode(CreateMode.EPHEMERAL).forPath(ZkPaths.load("s3"), // not live: ignored
                    MetaJson.write(new NodeLoad(100 * GIB, 1, Map.of(), 0)));

            JsonNode nodes = new TestHttp(namenode.baseUrl()).get("/v1/nodes").json().get("nodes");
            JsonNode s1 = nodes.get(0);
            assertEquals("s1", s1.get("id").asText());
            assertEquals(37 * GIB, s1.get("freeBytes").asLong(), "free space from the heartbeat");
            assertEquals(9, s1.get("load").get("queueDepth").get("write").asInt());
            assertEquals(1, s1.get("load").get("queueDepth").get("catch-up").asInt());
            assertEquals("2026-09-21T14:13:20Z", s1.get("load").get("reportedAt").asText());
            JsonNode s2 = nodes.get(1);
            assertTrue(s2.get("load").isNull(), s2.toString());
            assertEquals(100 * GIB, s2.get("freeBytes").asLong(), "the registration's figure without a heartbeat");
            JsonNode s3 = nodes.get(2);
            assertTrue(s3.get("load").isNull(), "a node that is not live has no load: " + s3);
        }
    }
}
