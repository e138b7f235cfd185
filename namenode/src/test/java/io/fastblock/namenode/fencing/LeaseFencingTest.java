package io.fastblock.namenode.fencing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.namenode.layers.StorageFences;
import io.fastblock.namenode.meta.FenceStore;
import io.fastblock.namenode.meta.NodeStore;
import io.fastblock.namenode.meta.ZkSchema;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.NodeRecord;
import io.fastblock.protocol.meta.ZkPaths;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.OptionalLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Lease fencing on a real ZooKeeper: the floor is recorded whatever happens, only rises, and a live
 * storage server that does not confirm makes the fence fail (end to end with real storage servers:
 * local-cluster's LeaseFencingIT).
 */
class LeaseFencingTest {
    private TestingServer server;
    private CuratorFramework zk;
    private FenceStore floors;
    private NodeStore nodes;
    private StorageFences servers;

    @BeforeEach
    void start() throws Exception {
        server = new TestingServer(true);
        zk = CuratorFrameworkFactory.newClient(server.getConnectString(), 10_000, 5_000, new RetryOneTime(100));
        zk.start();
        zk.blockUntilConnected();
        ZkSchema.ensure(zk);
        floors = new FenceStore(zk);
        nodes = new NodeStore(zk);
        servers = new StorageFences(nodes, Duration.ofSeconds(2));
    }

    @AfterEach
    void stop() throws Exception {
        servers.close();
        zk.close();
        server.close();
    }

    private void register(String id, int port, boolean live) throws Exception {
        zk.create().forPath(ZkPaths.node(id), MetaJson.write(new NodeRecord(id, "127.0.0.1", port, 1L << 40, 1L << 40)));
        if (live) {
            zk.create().withMode(CreateMode.EPHEMERAL).forPath(ZkPaths.live(id));
        }
    }

    @Test
    void theFloorOnlyRises() {
        assertTrue(floors.get(9).isEmpty());
        assertEquals(5, floors.raise(9, 5));
        assertEquals(5, floors.raise(9, 4), "a lower epoch leaves the floor as it is");
        assertEquals(OptionalLong.of(5), floors.get(9));
        assertEquals(Long.MAX_VALUE, floors.raise(9, Long.MAX_VALUE), "a seal is the highest floor");
        assertEquals(Long.MAX_VALUE, floors.raise(9, 6), "nothing unseals");
    }

    @Test
    void withNoLiveServerTheFloorInZooKeeperIsTheWholeFence() throws Exception {
        register("down", 1, false); // a registered server that is down loads the floor when it starts
        new LeaseFencing(floors, servers).fence(7, 3);
        assertEquals("3", new String(zk.getData().forPath(ZkPaths.fence(7)), StandardCharsets.US_ASCII));
    }

    @Test
    void aLiveServerThatCannotBeReachedFailsTheFenceButTheFloorStays() throws Exception {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        register("s1", closedPort, true);
        FenceIncompleteException e = assertThrows(FenceIncompleteException.class,
                () -> new LeaseFencing(floors, servers).fence(7, 2));
        assertTrue(e.getMessage().contains("s1") && e.getMessage().contains("epoch 2"), e.getMessage());
        assertEquals(OptionalLong.of(2), floors.get(7), "recorded for the servers that load it later");
    }
}
