package io.fastblock.storage.chain;

import io.fastblock.protocol.meta.SealedIds;
import io.fastblock.protocol.meta.VolumeFences;
import io.fastblock.protocol.meta.ZkPaths;
import java.io.Closeable;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Feeds the lease-epoch floors recorded under {@code /fastblock/fences} into this node's
 * {@link EpochFence}: all of them at start-up (before the node serves anything, so a restart
 * never forgets a fence) and every change afterwards. Floors only rise; a deleted znode changes
 * nothing here. Ids sealed for good whose layers were reclaimed are read from
 * {@code /fastblock/sealed-ids} ({@link SealedIds}) the same way.
 */
public final class FenceDirectory implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(FenceDirectory.class);

    private final CuratorFramework zk;
    private final EpochFence fence;
    private final CuratorCache cache;
    private final CuratorCache sealedCache;

    public FenceDirectory(CuratorFramework zk, EpochFence fence) {
        this.zk = zk;
        this.fence = fence;
        this.cache = CuratorCache.build(zk, ZkPaths.FENCES);
        cache.listenable().addListener(CuratorCacheListener.builder()
                .forCreatesAndChanges((old, node) -> accept(node))
                .build());
        this.sealedCache = CuratorCache.build(zk, ZkPaths.SEALED_IDS);
        sealedCache.listenable().addListener(CuratorCacheListener.builder()
                .forCreatesAndChanges((old, node) -> {
                    if (ZkPaths.SEALED_IDS.equals(node.getPath())) {
                        applySealed(node.getData());
                    }
                })
                .build());
    }

    /** Loads every recorded floor (synchronously), then watches for changes. Returns how many it loaded. */
    public int start() throws Exception {
        int loaded = 0;
        try {
            for (String child : zk.getChildren().forPath(ZkPaths.FENCES)) {
                try {
                    apply(child, zk.getData().forPath(ZkPaths.FENCES + "/" + child));
                    loaded++;
                } catch (KeeperException.NoNodeException gone) {
                    // deleted meanwhile: nothing to apply
                }
            }
        } catch (KeeperException.NoNodeException none) {
            // no fence recorded yet
        }
        // Read after the fences: the namenode removes a seal from fences/ only in the transaction that
        // adds it here, so a seal missed above (removed after the listing) is in what is read now.
        try {
            applySealed(zk.getData().forPath(ZkPaths.SEALED_IDS));
        } catch (KeeperException.NoNodeException none) {
            // no layer reclaimed yet
        }
        cache.start();
        sealedCache.start();
        return loaded;
    }

    private void applySealed(byte[] data) {
        try {
            fence.sealAll(SealedIds.parse(data));
        } catch (IllegalArgumentException e) {
            LOG.warn("ignoring unreadable {}: {}", ZkPaths.SEALED_IDS, e.getMessage());
        }
    }

    private void accept(ChildData node) {
        String path = node.getPath();
        if (!path.startsWith(ZkPaths.FENCES + "/") || node.getData() == null) {
            return;
        }
        apply(path.substring(ZkPaths.FENCES.length() + 1), node.getData());
    }

    private void apply(String child, byte[] data) {
        try {
            long volumeId = Long.parseLong(child);
            fence.raise(volumeId, VolumeFences.parse(data));
        } catch (IllegalArgumentException e) {
            LOG.warn("ignoring unreadable fence {}/{}: {}", ZkPaths.FENCES, child, e.getMessage());
        }
    }

    @Override
    public void close() {
        cache.close();
        sealedCache.close();
    }
}
