package io.fastblock.namenode.meta;

import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.ReclaimRecord;
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
     * the same transaction as the item, so a crash in between leaves the item to be done again.
     */
    public void done(Item item) {
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
                }
                tx.add(zk.transactionOp().delete().forPath(item.path()));
                return zk.transaction().forOperations(tx);
            });
        } catch (KeeperException.NoNodeException e) {
            // finished by another leader meanwhile
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("finish " + item.path(), e);
        }
    }
}
