package io.fastblock.protocol.meta;

import java.nio.charset.StandardCharsets;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * The persistent lease-epoch floor of a volume id at {@link ZkPaths#fence(long)}: decimal text of
 * the epoch, {@link #SEALED} (= {@code Long.MAX_VALUE}) when no write may be admitted any more.
 *
 * <p>Order for a sender (namenode) that fences a volume id: first {@link #raise} the znode, then send
 * FENCE to every live storage server and wait for every OK. The znode reaches servers that are down
 * or join later (they load it at start-up and watch it); the FENCE op is what waits for the writes
 * already admitted. Once every live server answered OK, no write with an older epoch can still be
 * acknowledged.
 */
public final class VolumeFences {
    public static final long SEALED = Long.MAX_VALUE;

    private VolumeFences() {
    }

    public static byte[] encode(long epoch) {
        if (epoch < 0) {
            throw new IllegalArgumentException("negative fence epoch " + epoch);
        }
        return Long.toString(epoch).getBytes(StandardCharsets.US_ASCII);
    }

    /** Parses a znode's data; throws IllegalArgumentException with the offending text otherwise. */
    public static long parse(byte[] data) {
        String text = new String(data, StandardCharsets.US_ASCII).trim();
        try {
            long epoch = Long.parseLong(text);
            if (epoch < 0) {
                throw new IllegalArgumentException("negative fence epoch \"" + text + "\"");
            }
            return epoch;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("fence znode holds \"" + text + "\", not a decimal epoch");
        }
    }

    /**
     * Raises the recorded floor of {@code volumeId} to {@code epoch} unless it is already at least
     * that (compare-and-set on the znode version, so concurrent raisers never lower it).
     *
     * @return the floor recorded afterwards (>= epoch)
     */
    public static long raise(CuratorFramework zk, long volumeId, long epoch) throws Exception {
        String path = ZkPaths.fence(volumeId);
        byte[] data = encode(epoch);
        while (true) {
            Stat stat = new Stat();
            long current;
            try {
                current = parse(zk.getData().storingStatIn(stat).forPath(path));
            } catch (KeeperException.NoNodeException e) {
                try {
                    zk.create().creatingParentsIfNeeded().forPath(path, data);
                    return epoch;
                } catch (KeeperException.NodeExistsException raced) {
                    continue;
                }
            }
            if (current >= epoch) {
                return current;
            }
            try {
                zk.setData().withVersion(stat.getVersion()).forPath(path, data);
                return epoch;
            } catch (KeeperException.BadVersionException | KeeperException.NoNodeException raced) {
                // someone else changed it between our read and write: read again
            }
        }
    }

    /** The recorded floor of {@code volumeId}, 0 when none was ever recorded. */
    public static long read(CuratorFramework zk, long volumeId) throws Exception {
        try {
            return parse(zk.getData().forPath(ZkPaths.fence(volumeId)));
        } catch (KeeperException.NoNodeException e) {
            return 0;
        }
    }
}
