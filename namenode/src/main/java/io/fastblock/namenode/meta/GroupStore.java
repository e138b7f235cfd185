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

    /** All groups, by id. */
    public List<GroupRecord> list() {
        List<String> children;
        try {
            children = ZkCalls.run("list groups", () -> zk.getChildren().forPath(ZkPaths.GROUPS));
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("list groups", e);
        }
        List<GroupRecord> out = new ArrayList<>(children.size());
        for (String child : children) {
            String path = ZkPaths.group(ZkPaths.groupIdOf(child));
            try {
                out.add(MetaJson.read(ZkCalls.run("read group " + child, () -> zk.getData().forPath(path)),
                        GroupRecord.class));
            } catch (KeeperException.NoNodeException e) {
                // removed meanwhile
            } catch (KeeperException e) {
                throw ZkCalls.unexpected("read group " + child, e);
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
}
