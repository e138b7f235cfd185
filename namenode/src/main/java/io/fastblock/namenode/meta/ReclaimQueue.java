package io.fastblock.namenode.meta;

import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.ReclaimRecord;
import io.fastblock.protocol.meta.SealedIds;
import io.fastblock.protocol.meta.VolumeFences;
import io.fastblock.protocol.meta.ZkPaths;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;

/**
 * The reclaim records under {@code /fastblock/reclaim} (written by {@link LayerStacks} in the same
 * transaction as the change that freed the space), in the order they were queued, and what is left
 * to remove once one is done.
 */
public final class ReclaimQueue {
    private final CuratorFramework zk;

    public ReclaimQueue(CuratorFramework zk) {
        this.zk = zk;
    }

    /** A queued record and the znode to delete when it is done. */
    public record Item(String path, ReclaimRecord record) {
    }

    public List<Item> pending() {
        List<String> names;
        try {
            names = new ArrayList<>(ZkCalls.run("list reclaim", () -> zk.getChildren().forPath(ZkPaths.RECLAIM)));
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("list reclaim", e);
        }
        names.sort(null); // sequential suffixes: queue order
        List<Item> out = new ArrayList<>();
        for (String n : names) {
            String path = ZkPaths.RECLAIM + "/" + n;
            try {
                out.add(new Item(path, MetaJson.read(ZkCalls.run("read " + path, () -> zk.getData().forPath(path)),
                        ReclaimRecord.class)));
            } catch (KeeperException.NoNodeException e) {
                // done meanwhile
            } catch (KeeperException e) {
                throw ZkCalls.unexpected("read " + path, e);
            }
        }
        return out;
    }

    /**
     * Finishes an item: for a whole-layer reclaim the layer's znodes (record and chunk map) go in
     * the same transaction as the item, so a crash in between leaves the item to be done again; a
     * sealed layer's seal moves from {@code fences/{id}} into {@link SealedIds} in that transaction
     * too (storage servers load both before serving, so no restart forgets it), and the deleted
     * volume leaves no znode of its own behind.
     */
    public void done(Item item) {
        while (true) {
            try {
                ZkCalls.run("finish " + item.path(), () -> {
                    var tx = new ArrayList<org.apache.curator.framework.api.transaction.CuratorOp>();
                    if (item.record().wholeLayer()) {
                        long layer = item.record().layerId();
                        String map = ZkPaths.layerChunkMap(layer);
                        if (zk.checkExists().forPath(map) != null) {
                            for (String b : zk.getChildren().forPath(map)) {
                                tx.add(zk.transactionOp().delete().forPath(map + "/" + b));
                            }
                            tx.add(zk.transactionOp().delete().forPath(map));
                        }
                        if (zk.checkExists().forPath(ZkPaths.layer(layer)) != null) {
                            tx.add(zk.transactionOp().delete().forPath(ZkPaths.layer(layer)));
                        }
                        moveSeal(layer, tx);
                    }
                    tx.add(zk.transactionOp().delete().forPath(item.path()));
                    return zk.transaction().forOperations(tx);
                });
                return;
            } catch (KeeperException.NoNodeException e) {
                if (stillQueued(item)) {
                    continue; // a fence or the sealed set changed meanwhile: read them again
                }
                return; // finished by another leader meanwhile
            } catch (KeeperException.BadVersionException | KeeperException.NodeExistsException e) {
                // the sealed set or a fence changed meanwhile: read them again
            } catch (KeeperException e) {
                throw ZkCalls.unexpected("finish " + item.path(), e);
            }
        }
    }

    /** Adds to {@code tx} the move of {@code layer}'s seal into the sealed set (nothing if it is not sealed). */
    private void moveSeal(long layer, List<org.apache.curator.framework.api.transaction.CuratorOp> tx)
            throws Exception {
        org.apache.zookeeper.data.Stat fence = zk.checkExists().forPath(ZkPaths.fence(layer));
        if (fence == null) {
            return;
        }
        org.apache.zookeeper.data.Stat fs = new org.apache.zookeeper.data.Stat();
        long floor = VolumeFences.parse(zk.getData().storingStatIn(fs).forPath(ZkPaths.fence(layer)));
        if (floor != VolumeFences.SEALED) {
            return; // a floor still in use (a shadowed layer's owner lives on): leave it
        }
        org.apache.zookeeper.data.Stat ss = new org.apache.zookeeper.data.Stat();
        SealedIds sealed;
        try {
            sealed = SealedIds.parse(zk.getData().storingStatIn(ss).forPath(ZkPaths.SEALED_IDS));
            tx.add(zk.transactionOp().setData().withVersion(ss.getVersion())
                    .forPath(ZkPaths.SEALED_IDS, sealed.with(layer).encode()));
        } catch (KeeperException.NoNodeException e) {
            sealed = SealedIds.EMPTY;
            tx.add(zk.transactionOp().create().forPath(ZkPaths.SEALED_IDS, sealed.with(layer).encode()));
        }
        tx.add(zk.transactionOp().delete().withVersion(fs.getVersion()).forPath(ZkPaths.fence(layer)));
    }

    private boolean stillQueued(Item item) {
        try {
            return ZkCalls.run("check " + item.path(), () -> zk.checkExists().forPath(item.path())) != null;
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("check " + item.path(), e);
        }
    }

    /** The ids whose seals were moved out of {@code fences/} (empty when none yet). */
    public SealedIds sealedIds() {
        try {
            return SealedIds.parse(ZkCalls.run("read sealed ids", () -> zk.getData().forPath(ZkPaths.SEALED_IDS)));
        } catch (KeeperException.NoNodeException e) {
            return SealedIds.EMPTY;
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("read sealed ids", e);
        }
    }
}
