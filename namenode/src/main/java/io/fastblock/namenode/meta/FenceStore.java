package io.fastblock.namenode.meta;

import io.fastblock.protocol.meta.VolumeFences;
import io.fastblock.protocol.meta.ZkPaths;
import java.util.OptionalLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;

/**
 * Lease-epoch floors under {@code /fastblock/fences/{volumeId}} ({@link VolumeFences}). Storage
 * servers load and watch them, so a floor reaches servers that were down or unreachable when the
 * lease moved. A floor only ever rises (compare-and-set on the znode version).
 */
public final class FenceStore {
    private final CuratorFramework zk;

    public FenceStore(CuratorFramework zk) {
        this.zk = zk;
    }

    /** The recorded floor, empty when none was ever recorded. */
    public OptionalLong get(long volumeId) {
        try {
            byte[] raw = ZkCalls.run("read fence", () -> zk.getData().forPath(ZkPaths.fence(volumeId)));
            return OptionalLong.of(VolumeFences.parse(raw));
        } catch (KeeperException.NoNodeException e) {
            return OptionalLong.empty();
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("read fence of volume id " + volumeId, e);
        }
    }

    /** Raises the floor of {@code volumeId} to {@code epoch} (never lowers it); returns the floor now recorded. */
    public long raise(long volumeId, long epoch) {
        try {
            return ZkCalls.run("raise fence", () -> VolumeFences.raise(zk, volumeId, epoch));
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("raise fence of volume id " + volumeId + " to " + epoch, e);
        }
    }
}
