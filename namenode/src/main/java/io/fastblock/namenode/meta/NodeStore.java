package io.fastblock.namenode.meta;

import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.NodeAdminRecord;
import io.fastblock.protocol.meta.NodeLoad;
import io.fastblock.protocol.meta.NodeRecord;
import io.fastblock.protocol.meta.ZkPaths;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;

/**
 * Storage servers as they registered themselves: {@code /fastblock/nodes/{id}} (persistent record)
 * and {@code /fastblock/live/{id}} (ephemeral, present while the server's session is alive).
 * The namenode only reads these, and keeps the operator's intent for each node (active, draining,
 * decommissioned) in {@code /fastblock/node-admin/{id}}, which the servers never write.
 */
public final class NodeStore {
    /**
     * A registered node, whether it is live right now, its admin state ({@link NodeAdminRecord}) and its
     * last heartbeat ({@link NodeLoad}; null when it has none: not live, or not reported yet).
     */
    public record NodeState(NodeRecord record, boolean live, String state, NodeLoad load) {
        public NodeState(NodeRecord record, boolean live, String state) {
            this(record, live, state, null);
        }

        public NodeState(NodeRecord record, boolean live) {
            this(record, live, NodeAdminRecord.ACTIVE);
        }

        /** Free bytes as last reported: the heartbeat's figure when there is one, else the registration's. */
        public long freeBytes() {
            return load != null ? load.freeBytes() : record.freeBytes();
        }

        public boolean active() {
            return NodeAdminRecord.ACTIVE.equals(state);
        }
    }

    private final CuratorFramework zk;

    public NodeStore(CuratorFramework zk) {
        this.zk = zk;
    }

    /** Ids of the nodes with a live znode, sorted. */
    public List<String> liveIds() {
        try {
            List<String> ids = new ArrayList<>(ZkCalls.run("list live nodes",
                    () -> zk.getChildren().forPath(ZkPaths.LIVE)));
            ids.sort(null);
            return ids;
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("list live nodes", e);
        }
    }

    /**
     * Every registered node by id, with its live flag, admin state and (live nodes) last heartbeat.
     * Two ZooKeeper round trips whatever the number of nodes: the two listings together, then every
     * record, state and heartbeat together. Placement reads this for each chunk it allocates; one
     * read after the other it was 11 round trips with three servers.
     */
    public Map<String, NodeState> all() {
        ZkReads listings = new ZkReads(zk, "list nodes");
        int nodesSlot = listings.children(ZkPaths.NODES);
        int liveSlot = listings.children(ZkPaths.LIVE);
        listings.run();
        List<String> ids = orEmpty(listings.children(nodesSlot));
        Set<String> live = new HashSet<>(orEmpty(listings.children(liveSlot)));
        ZkReads reads = new ZkReads(zk, "read nodes " + ids);
        int[] records = new int[ids.size()];
        int[] states = new int[ids.size()];
        int[] loads = new int[ids.size()];
        for (int i = 0; i < ids.size(); i++) {
            String id = ids.get(i);
            records[i] = reads.data(ZkPaths.node(id));
            states[i] = reads.data(ZkPaths.nodeAdmin(id));
            loads[i] = live.contains(id) ? reads.data(ZkPaths.load(id)) : -1;
        }
        reads.run();
        Map<String, NodeState> out = new TreeMap<>();
        for (int i = 0; i < ids.size(); i++) {
            byte[] record = reads.data(records[i]);
            if (record != null) {
                String id = ids.get(i);
                byte[] state = reads.data(states[i]);
                out.put(id, new NodeState(MetaJson.read(record, NodeRecord.class), live.contains(id),
                        state == null ? NodeAdminRecord.ACTIVE : MetaJson.read(state, NodeAdminRecord.class).state(),
                        loads[i] < 0 ? null : heartbeat(reads.data(loads[i]))));
            }
        }
        return out;
    }

    private static List<String> orEmpty(List<String> listed) {
        return listed == null ? List.of() : listed;
    }

    /** A heartbeat as read; null when there is none or this namenode cannot parse it (no heartbeat then). */
    private static NodeLoad heartbeat(byte[] raw) {
        if (raw == null) {
            return null;
        }
        try {
            return MetaJson.read(raw, NodeLoad.class);
        } catch (RuntimeException e) {
            return null;
        }
    }

    /**
     * What a chunk's route needs of {@code ids}: each one's address and whether it is live; its
     * admin state and load are not read (null). Absent ids are left out. The listing of the live
     * nodes and the records are read all at once, so a lookup waits for one ZooKeeper round trip
     * here, not one per node plus one: every chunk a gateway has not cached comes through this.
     * ({@link #all()} reads every node's record, state and load, 11 round trips with three servers,
     * which made a chunk lookup take 2-26 ms on this machine.)
     */
    public Map<String, NodeState> routing(Collection<String> ids) {
        List<String> asked = List.copyOf(new LinkedHashSet<>(ids));
        ZkReads reads = new ZkReads(zk, "read nodes " + asked);
        int liveSlot = reads.children(ZkPaths.LIVE);
        int[] slots = new int[asked.size()];
        for (int i = 0; i < asked.size(); i++) {
            slots[i] = reads.data(ZkPaths.node(asked.get(i)));
        }
        reads.run();
        List<String> listed = reads.children(liveSlot);
        Set<String> live = listed == null ? Set.of() : new HashSet<>(listed);
        Map<String, NodeState> out = new TreeMap<>();
        for (int i = 0; i < asked.size(); i++) {
            byte[] raw = reads.data(slots[i]);
            if (raw != null) {
                String id = asked.get(i);
                out.put(id, new NodeState(MetaJson.read(raw, NodeRecord.class), live.contains(id), null, null));
            }
        }
        return out;
    }

    /** The node's last heartbeat, or null when it has none (or it cannot be read as one). */
    public NodeLoad load(String id) {
        try {
            return heartbeat(ZkCalls.run("read load of " + id, () -> zk.getData().forPath(ZkPaths.load(id))));
        } catch (KeeperException.NoNodeException e) {
            return null;
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("read load of " + id, e);
        }
    }

    public void setAdminState(String id, String state) {
        String path = ZkPaths.nodeAdmin(id);
        byte[] data = MetaJson.write(new NodeAdminRecord(id, state));
        try {
            try {
                ZkCalls.run("write node state", () -> zk.setData().forPath(path, data));
            } catch (KeeperException.NoNodeException e) {
                ZkCalls.run("create node state", () -> zk.create().creatingParentsIfNeeded().forPath(path, data));
            }
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("write node state " + id, e);
        }
    }
}
