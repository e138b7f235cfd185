package io.fastblock.namenode.placement;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.namenode.meta.GroupStore;
import io.fastblock.namenode.meta.NodeStore;
import io.fastblock.namenode.meta.ZkTestSupport;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.NodeRecord;
import io.fastblock.protocol.meta.ZkPaths;
import java.util.List;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Formation decisions against a real ZooKeeper, called directly (no waiting on watches). */
class GroupFormationTest extends ZkTestSupport {
    private GroupStore groups;
    private NodeStore nodes;
    private GroupFormation formation;

    @BeforeEach
    void start() {
        groups = new GroupStore(zk);
        nodes = new NodeStore(zk);
        formation = new GroupFormation(zk, groups, nodes);
    }

    @AfterEach
    void stop() {
        formation.close();
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

        assertFalse(formation.check(), "formed once");
        assertEquals(formed, groups.list());
    }

    @Test
    void serversThatJoinLaterGetGroupsOfTheirOwnAndNewChunks() throws Exception {
        live("a");
        live("b");
        live("c");
        live("d");
        assertTrue(formation.check());
        List<GroupRecord> formed = groups.list();
        assertEquals(4, formed.size());
        ChunkPlacement placement = new ChunkPlacement(groups, nodes);
        for (long chunk = 0; chunk < 40; chunk++) {
            placement.groupFor(1, chunk); // 10 chunks in each of the first groups
        }
        live("e");
        assertTrue(formation.check());
        List<GroupRecord> after = groups.list();
        assertEquals(formed, after.subList(0, formed.size()), "existing groups unchanged");
        List<GroupRecord> added = after.subList(formed.size(), after.size());
        assertEquals(3, added.size(), "e gets its share: as many groups as the others (3)");
        for (int role = 0; role < 3; role++) {
            int r = role;
            assertEquals(1, added.stream().filter(g -> g.members().get(r).equals("e")).count(), "e once in role " + r);
        }
        assertFalse(formation.check(), "e is placed now");
        // New chunks go to the new, empty groups first, so e fills up while the others keep theirs.
        int toE = 0;
        for (long chunk = 40; chunk < 70; chunk++) {
            int g = placement.groupFor(1, chunk);
            if (after.stream().filter(x -> x.id() == g).findFirst().orElseThrow().members().contains("e")) {
                toE++;
            }
        }
        assertEquals(30, toE, "the 30 chunks after the join all include e until its groups catch up");
    }

    @Test
    void noNewGroupsWhileAGroupIsDegraded() throws Exception {
        live("a");
        live("b");
        live("c");
        assertTrue(formation.check());
        GroupStore.Versioned g1 = groups.get(1).orElseThrow();
        assertTrue(groups.compareAndSet(g1, new GroupRecord(1, 2, List.of("b", "c"))));
        live("d");
        assertFalse(formation.check(), "chain repair may use d as a replacement first");
        GroupStore.Versioned g1b = groups.get(1).orElseThrow();
        assertTrue(groups.compareAndSet(g1b, new GroupRecord(1, 3, List.of("b", "c", "a"))));
        assertTrue(formation.check());
        assertTrue(groups.list().stream().anyMatch(g -> g.members().contains("d")));
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
