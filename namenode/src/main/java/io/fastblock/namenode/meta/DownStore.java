package io.fastblock.namenode.meta;

import io.fastblock.protocol.meta.DownRecord;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.ZkPaths;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;

/**
 * The down/out state of storage nodes, {@code /fastblock/down/{id}} ({@link DownRecord}): written by
 * the leader's chain repair only, read by it and by the status route. In ZooKeeper rather than in
 * the leader's memory so a namenode failover keeps every node's down-since time.
 */
public final class DownStore {
    private final CuratorFramework zk;

    public DownStore(CuratorFramework zk) {
        this.zk = zk;
    }

    /** Every record, by node id (records this namenode cannot parse are skipped: nothing waits on them). */
    public Map<String, DownRecord> all() {
        List<String> ids;
        try {
            ids = ZkCalls.run("list down nodes", () -> zk.getChildren().forPath(ZkPaths.DOWN));
        } catch (KeeperException.NoNodeException e) {
            return Map.of();
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("list down nodes", e);
        }
        Map<String, DownRecord> out = new TreeMap<>();
        for (String id : ids) {
            try {
                byte[] raw = ZkCalls.run("read down record " + id, () -> zk.getData().forPath(ZkPaths.down(id)));
                out.put(id, MetaJson.read(raw, DownRecord.class));
            } catch (KeeperException.NoNodeException e) {
                // removed meanwhile
            } catch (KeeperException e) {
                throw ZkCalls.unexpected("read down record " + id, e);
            } catch (UncheckedIOException e) {
                // unreadable: treated as absent
            }
        }
        return out;
    }

    /** Creates or overwrites the node's record. */
    public void put(DownRecord r) {
        String path = ZkPaths.down(r.id());
        byte[] data = MetaJson.write(r);
        try {
            try {
                ZkCalls.run("write down record", () -> zk.setData().forPath(path, data));
            } catch (KeeperException.NoNodeException e) {
                ZkCalls.run("create down record", () -> zk.create().creatingParentsIfNeeded().forPath(path, data));
            }
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("write down record " + r.id(), e);
        }
    }

    public void delete(String id) {
        try {
            ZkCalls.run("delete down record", () -> zk.delete().forPath(ZkPaths.down(id)));
        } catch (KeeperException.NoNodeException e) {
            // already gone
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("delete down record " + id, e);
        }
    }
}
