package io.fastblock.namenode.meta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.NodeAdminRecord;
import io.fastblock.protocol.meta.NodeLoad;
import io.fastblock.protocol.meta.NodeRecord;
import io.fastblock.protocol.meta.ZkPaths;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Against a real ZooKeeper: what a chunk route is told about its members matches the full listing. */
class NodeStoreTest extends ZkTestSupport {

    private void register(String id, int port, boolean live) throws Exception {
        NodeRecord r = new NodeRecord(id, "127.0.0.1", port, 1L << 30, 1L << 29, Map.of());
        zk.create().creatingParentsIfNeeded().forPath(ZkPaths.node(id), io.fastblock.protocol.meta.MetaJson.write(r));
        if (live) {
            zk.create().creatingParentsIfNeeded().forPath(ZkPaths.live(id));
        }
    }

    @Test
    void routingReadsOnlyTheAskedNodesAddressesAndLiveness() throws Exception {
        register("s1", 9401, true);
        register("s2", 9402, false);
        register("s3", 9403, true);
        register("s4", 9404, true);
        NodeStore nodes = new NodeStore(zk);
        Map<String, NodeStore.NodeState> r = nodes.routing(List.of("s3", "s2", "gone", "s1"));
        assertEquals(List.of("s1", "s2", "s3"), List.copyOf(r.keySet()), "asked ids that exist, in order; s4 not asked");
        Map<String, NodeStore.NodeState> all = nodes.all();
        for (String id : r.keySet()) {
            assertEquals(all.get(id).record(), r.get(id).record(), id);
            assertEquals(all.get(id).live(), r.get(id).live(), id);
            assertNull(r.get(id).state(), "admin state is not read");
            assertNull(r.get(id).load(), "load is not read");
        }
        assertTrue(r.get("s1").live());
        assertFalse(r.get("s2").live());
        assertEquals(9403, r.get("s3").record().port());
    }

    @Test
    void routingWithNoLiveNodeListedAndNoIdsAsked() throws Exception {
        register("s1", 9401, false);
        zk.delete().forPath(ZkPaths.LIVE);
        NodeStore nodes = new NodeStore(zk);
        Map<String, NodeStore.NodeState> r = nodes.routing(List.of("s1", "s1"));
        assertEquals(List.of("s1"), List.copyOf(r.keySet()), "an id asked twice is read once");
        assertFalse(r.get("s1").live(), "no live znode at all: not live");
        assertTrue(nodes.routing(List.of()).isEmpty());
        assertTrue(nodes.routing(List.of("gone")).isEmpty());
    }

    @Test
    void routingWithoutZooKeeperSaysMetadataIsUnavailable() throws Exception {
        register("s1", 9401, true);
        NodeStore nodes = new NodeStore(zk);
        server.stop();
        MetadataUnavailableException e = assertThrows(MetadataUnavailableException.class,
                () -> nodes.routing(List.of("s1")));
        assertTrue(e.getMessage().contains("s1") || e.getMessage().contains("live"), e.getMessage());
    }

    @Test
    void allReadsEachNodesRecordStateAndHeartbeatTogether() throws Exception {
        register("s1", 9401, true);
        register("s2", 9402, false);
        register("s3", 9403, true);
        NodeStore nodes = new NodeStore(zk);
        nodes.setAdminState("s3", NodeAdminRecord.DRAINING);
        NodeLoad beat = new NodeLoad(1L << 30, 1L << 28, Map.of(NodeLoad.READ, 3), 1234L);
        zk.create().creatingParentsIfNeeded().forPath(ZkPaths.load("s1"), MetaJson.write(beat));
        zk.create().creatingParentsIfNeeded().forPath(ZkPaths.load("s2"), MetaJson.write(beat)); // not live: not read
        zk.create().creatingParentsIfNeeded().forPath(ZkPaths.load("s3"), "not json".getBytes(StandardCharsets.UTF_8));
        zk.create().creatingParentsIfNeeded().forPath(ZkPaths.live("ghost")); // live but never registered

        Map<String, NodeStore.NodeState> all = nodes.all();
        assertEquals(List.of("s1", "s2", "s3"), List.copyOf(all.keySet()));
        assertEquals(9401, all.get("s1").record().port());
        assertTrue(all.get("s1").live());
        assertEquals(NodeAdminRecord.ACTIVE, all.get("s1").state(), "no admin record: active");
        assertEquals(beat, all.get("s1").load());
        assertEquals(1L << 28, all.get("s1").freeBytes(), "the heartbeat's free bytes");
        assertFalse(all.get("s2").live());
        assertNull(all.get("s2").load(), "a node that is not live has no heartbeat");
        assertEquals(NodeAdminRecord.DRAINING, all.get("s3").state());
        assertNull(all.get("s3").load(), "a heartbeat that cannot be parsed is none");
        assertNull(nodes.load("s3"));
        assertEquals(beat, nodes.load("s1"));
    }

    @Test
    void allOfAnEmptyClusterIsEmpty() throws Exception {
        zk.delete().forPath(ZkPaths.LIVE);
        assertTrue(new NodeStore(zk).all().isEmpty());
    }
}
