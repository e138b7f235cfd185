package io.fastblock.namenode.meta;

import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.ZkPaths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.KeeperException;

/** Replication groups under {@code /fastblock/groups/{id}}. */
public final class GroupStore {
    private final CuratorFramework zk;

    public GroupStore(CuratorFramework zk) {
        this.zk = zk;
    }

    /** All groups, by id (two ZooKeeper round trips: the listing, then every record at once). */
    public List<GroupRecord> list() {
        List<String> children;
        try {
            children = ZkCalls.run("list groups", () -> zk.getChildren().forPath(ZkPaths.GROUPS));
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("list groups", e);
        }
        // Every record read together: placement lists the groups for each chunk it allocates.
        ZkReads reads = new ZkReads(zk, "read groups");
        int[] slots = children.stream().mapToInt(child -> reads.data(ZkPaths.group(ZkPaths.groupIdOf(child)))).toArray();
        reads.run();
        List<GroupRecord> out = new ArrayList<>(children.size());
        for (int slot : slots) {
            byte[] raw = reads.data(slot);
            if (raw != null) { // null: removed meanwhile
                out.add(MetaJson.read(raw, GroupRecord.class));
            }
        }
        out.sort(Comparator.comparingInt(GroupRecord::id));
        return out;
    }

    /**
     * Creates all {@code groups} in one transaction, so readers see none or all of them. Returns false
     * (and creates nothing) if any of those ids already exists.
     */
    public boolean createAll(List<GroupRecord> groups) {
        if (groups.isEmpty()) {
            return true;
        }
        try {
            ZkCalls.run("create groups", () -> {
                List<CuratorOp> ops = new ArrayList<>(groups.size());
                for (GroupRecord g : groups) {
                    ops.add(zk.transactionOp().create().forPath(ZkPaths.group(g.id()), MetaJson.write(g)));
                }
                return zk.transaction().forOperations(ops);
            });
            return true;
        } catch (KeeperException.NodeExistsException e) {
            return false;
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("create groups", e);
        }
    }

    /** A group as read, with the znode version a compare-and-set must match. */
    public record Versioned(GroupRecord group, int zkVersion) {
    }

    public java.util.Optional<Versioned> get(int id) {
        org.apache.zookeeper.data.Stat stat = new org.apache.zookeeper.data.Stat();
        try {
            byte[] raw = ZkCalls.run("read group " + id, () -> zk.getData().storingStatIn(stat).forPath(ZkPaths.group(id)));
            return java.util.Optional.of(new Versioned(MetaJson.read(raw, GroupRecord.class), stat.getVersion()));
        } catch (KeeperException.NoNodeException e) {
            return java.util.Optional.empty();
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("read group " + id, e);
        }
    }

    /**
     * Replaces the group record if nobody changed it since {@code read}; false if someone did (re-read and
     * decide again). A chain change is one znode write, so every reader sees the old chain or the new one.
     */
    public boolean compareAndSet(Versioned read, GroupRecord next) {
        try {
            ZkCalls.run("update group " + next.id(), () -> zk.setData().withVersion(read.zkVersion())
                    .forPath(ZkPaths.group(next.id()), MetaJson.write(next)));
            return true;
        } catch (KeeperException.BadVersionException | KeeperException.NoNodeException e) {
            return false;
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("update group " + next.id(), e);
        }
    }

    /** The nodes that announced they caught up in this group ({@code ZkPaths.caughtUp}). */
    public List<String> caughtUp(int id) {
        String parent = ZkPaths.group(id) + "/caught-up";
        try {
            return ZkCalls.run("list caught-up of group " + id, () -> zk.getChildren().forPath(parent));
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("list caught-up of group " + id, e);
        }
    }

    /** Removes a caught-up marker once acted on (or stale), so a later join of that node starts clean. */
    public void clearCaughtUp(int id, String nodeId) {
        try {
            ZkCalls.run("clear caught-up", () -> zk.delete().forPath(ZkPaths.caughtUp(id, nodeId)));
        } catch (KeeperException.NoNodeException e) {
            // already gone
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("clear caught-up of group " + id, e);
        }
    }
}
