package io.fastblock.namenode.placement;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.namenode.meta.GroupStore;
import io.fastblock.namenode.meta.NodeStore;
import io.fastblock.namenode.meta.ZkSchema;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.NodeRecord;
import io.fastblock.protocol.meta.ZkPaths;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Formation decisions against a real ZooKeeper, called directly (no waiting on watches). */
class GroupFormationTest {
    private TestingServer server;
    private CuratorFramework zk;
    private GroupStore groups;
    private NodeStore nodes;
    private GroupFormation formation;

    @BeforeEach
    void start() throws Exception {
        server = new TestingServer(true);
        zk = CuratorFrameworkFactory.newClient(server.getConnectString(), new RetryOneTime(100));
        zk.start();
        zk.blockUntilConnected();
        ZkSchema.ensure(zk);
        groups = new GroupStore(zk);
        nodes = new NodeStore(zk);
        formation = new GroupFormation(zk, groups, nodes);
    }

    @AfterEach
    void stop() throws Exception {
        formation.close();
        zk.close();
        server.close();
    }

    private void live(String id) throws Exception {
        zk.create().forPath(ZkPaths.node(id), MetaJson.write(new NodeRecord(id, "127.0.0.1", 9401, 1, 1)));
        zk.create().withMode(CreateMode.EPHEMERAL).forPath(ZkPaths.live(id));
    }

    @Test
    void waitsForThreeLiveNodes() throws Exception {
        live("b");
        live("a");
        assertFalse(formation.check());
        assertTrue(groups.list().isEmpty());
        NoReplicationGroupsException e = assertThrows(NoReplicationGroupsException.class,
                () -> new ChunkPlacement(groups, nodes).groupFor(1, 0));
        assertTrue(e.getMessage().contains("2 storage node(s) live"), e.getMessage());
    }

    @Test
    void formsRotatedGroupsOnceAndOnlyOnce() throws Exception {
        live("c");
        live("a");
        live("b");
        assertTrue(formation.check());
        List<GroupRecord> formed = groups.list();
        assertEquals(GroupLayout.rotate(List.of("a", "b", "c")), formed);
        assertEquals(3, zk.getChildren().forPath(ZkPaths.GROUPS).size());
        assertEquals(ZkPaths.group(1), ZkPaths.GROUPS + "/" + zk.getChildren().forPath(ZkPaths.GROUPS).stream()
                .sorted().findFirst().orElseThrow());

        // Later nodes do not reshape existing groups (growing the cluster is not built yet).
        live("d");
        assertFalse(formation.check());
        assertEquals(formed, groups.list());
        assertEquals(2, new ChunkPlacement(groups, nodes).groupFor(1, 0));
    }

    @Test
    void withASettleTimeServersStartedTogetherAllGetGroups() throws Exception {
        try (GroupFormation settling = new GroupFormation(zk, groups, nodes, java.time.Duration.ofMillis(1500))) {
            live("a");
            live("b");
            live("c");
            assertFalse(settling.check(), "three are live, but the set has only just changed");
            live("d");
            live("e");
            assertFalse(settling.check());
            assertTrue(groups.list().isEmpty());
            settling.start(); // its scheduled re-check forms them once the set has been stable
            long deadline = System.nanoTime() + 20_000_000_000L;
            while (groups.list().isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertEquals(GroupLayout.rotate(List.of("a", "b", "c", "d", "e")), groups.list(),
                    "one group per node, all five");
        }
    }

    @Test
    void startFormsGroupsForNodesThatWereAlreadyLive() throws Exception {
        live("n1");
        live("n2");
        live("n3");
        formation.start();
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (groups.list().isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertEquals(3, groups.list().size());
    }

    @Test
    void createAllIsAllOrNothing() {
        assertTrue(groups.createAll(List.of(new GroupRecord(2, 1, List.of("x", "y", "z")))));
        assertFalse(groups.createAll(GroupLayout.rotate(List.of("a", "b", "c"))));
        assertEquals(List.of(new GroupRecord(2, 1, List.of("x", "y", "z"))), groups.list());
    }
}
