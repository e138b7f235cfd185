package io.fastblock.namenode.meta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.meta.NodeRecord;
import io.fastblock.protocol.meta.ZkPaths;
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
}
