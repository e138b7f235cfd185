package io.fastblock.namenode.meta;

import io.fastblock.protocol.meta.ExportRecord;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.QosSpec;
import io.fastblock.protocol.meta.SnapshotRecord;
import io.fastblock.protocol.meta.VolumeRecord;
import io.fastblock.protocol.meta.ZkPaths;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * Changes to an existing volume's record that move no data: its QoS limits and its name (what
 * {@code PATCH /v1/volumes/{name}} does). Both are compare-and-set on the volume znode's version,
 * so a concurrent change is never lost: the loser reads again and re-applies its change.
 */
public final class VolumeEdits {
    /** Bounds the retries of a rename that keeps losing to concurrent chunk allocations. */
    private static final int MAX_ATTEMPTS = 50;

    private final CuratorFramework zk;

    public VolumeEdits(CuratorFramework zk) {
        this.zk = zk;
    }

    /** Sets the volume's QoS limits; the gateway picks them up from the record. */
    public VolumeRecord setQos(String name, QosSpec qos) {
        String path = ZkPaths.volume(name);
        while (true) {
            Stat stat = new Stat();
            VolumeRecord current = read(path, stat, name);
            VolumeRecord next = current.withQos(qos);
            try {
                ZkCalls.run("set qos of " + name,
                        () -> zk.setData().withVersion(stat.getVersion()).forPath(path, MetaJson.write(next)));
                return next;
            } catch (KeeperException.BadVersionException e) {
                // changed meanwhile: apply to the new version
            } catch (KeeperException.NoNodeException e) {
                throw new VolumeNotFoundException(name);
            } catch (KeeperException e) {
                throw ZkCalls.unexpected("set qos of " + name, e);
            }
        }
    }

    /**
     * Renames a volume: its whole subtree (record, chunk map, exports, anything a later feature keeps
     * under the volume) is copied to the new name and the old one removed, in one ZooKeeper
     * transaction, so readers see either the old name or the new one, never both or neither. The
     * volume keeps its id, so its data on the storage servers (keyed by id) does not move. Export
     * records carry the volume name and are rewritten; a client id claim is pointed at the new name.
     *
     * @throws VolumeExistsException if {@code to} is taken
     * @throws VolumeNotFoundException if {@code from} does not exist
     */
    public VolumeRecord rename(String from, String to) {
        for (int attempt = 0; ; attempt++) {
            Stat stat = new Stat();
            VolumeRecord current = read(ZkPaths.volume(from), stat, from);
            VolumeRecord renamed = current.withName(to); // keeps the layer stack and the clone source
            List<CuratorOp> ops = new ArrayList<>();
            List<String> oldPaths = new ArrayList<>();
            try {
                ops.add(zk.transactionOp().check().withVersion(stat.getVersion()).forPath(ZkPaths.volume(from)));
                ops.add(zk.transactionOp().create().forPath(ZkPaths.volume(to), MetaJson.write(renamed)));
                copyChildren(from, to, ZkPaths.volume(from), ZkPaths.volume(to), ops, oldPaths);
                // Children before parents, so every delete finds its node empty.
                for (int i = oldPaths.size() - 1; i >= 0; i--) {
                    ops.add(zk.transactionOp().delete().forPath(oldPaths.get(i)));
                }
                ops.add(zk.transactionOp().delete().forPath(ZkPaths.volume(from)));
                if (current.clientId() != null) {
                    ops.add(zk.transactionOp().setData().forPath(ZkPaths.clientId(current.clientId()),
                            to.getBytes(StandardCharsets.UTF_8)));
                }
            } catch (KeeperException.NoNodeException e) {
                if (attempt < MAX_ATTEMPTS) {
                    continue; // a child went away while being read: read the tree again
                }
                throw ZkCalls.unexpected("rename " + from, e);
            } catch (KeeperException e) {
                throw ZkCalls.unexpected("rename " + from, e);
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new MetadataUnavailableException("rename " + from + ": " + e, e);
            }
            try {
                ZkCalls.run("rename " + from + " to " + to, () -> zk.transaction().forOperations(ops));
                return renamed;
            } catch (KeeperException.NodeExistsException e) {
                if (!exists(ZkPaths.volume(from))) {
                    throw new VolumeNotFoundException(from);
                }
                throw new VolumeExistsException(to);
            } catch (KeeperException.BadVersionException | KeeperException.NotEmptyException
                     | KeeperException.NoNodeException e) {
                // The volume changed, gained a chunk-map bucket or lost a node meanwhile: copy it again.
                if (attempt >= MAX_ATTEMPTS) {
                    throw ZkCalls.unexpected("rename " + from + " to " + to, e);
                }
            } catch (KeeperException e) {
                throw ZkCalls.unexpected("rename " + from + " to " + to, e);
            }
        }
    }

    private void copyChildren(String from, String to, String oldPath, String newPath, List<CuratorOp> ops,
                              List<String> oldPaths) throws Exception {
        for (String child : zk.getChildren().forPath(oldPath)) {
            String oldChild = oldPath + "/" + child;
            String newChild = newPath + "/" + child;
            byte[] data = zk.getData().forPath(oldChild);
            if (oldPath.equals(ZkPaths.exports(from)) && data != null && data.length > 0) {
                ExportRecord e = MetaJson.read(data, ExportRecord.class);
                data = MetaJson.write(new ExportRecord(to, e.initiator(), e.host(), e.chapUser(), e.chapSecret(),
                        e.targetUser(), e.targetSecret(), e.createdAt()));
            }
            if (oldPath.equals(ZkPaths.snapshots(from)) && data != null && data.length > 0) {
                SnapshotRecord s = MetaJson.read(data, SnapshotRecord.class);
                data = MetaJson.write(new SnapshotRecord(s.name(), to, s.clientId(), s.size(), s.createdAt(), s.state(),
                        s.layers()));
            }
            ops.add(zk.transactionOp().create().forPath(newChild, data == null ? new byte[0] : data));
            oldPaths.add(oldChild);
            copyChildren(from, to, oldChild, newChild, ops, oldPaths);
        }
    }

    private VolumeRecord read(String path, Stat stat, String name) {
        try {
            byte[] raw = ZkCalls.run("read volume " + name, () -> zk.getData().storingStatIn(stat).forPath(path));
            return MetaJson.read(raw, VolumeRecord.class);
        } catch (KeeperException.NoNodeException e) {
            throw new VolumeNotFoundException(name);
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("read volume " + name, e);
        }
    }

    private boolean exists(String path) {
        try {
            return ZkCalls.run("stat " + path, () -> zk.checkExists().forPath(path)) != null;
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("stat " + path, e);
        }
    }
}
