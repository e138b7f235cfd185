package io.fastblock.namenode.meta;

import io.fastblock.protocol.meta.LeaseRecord;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.ZkPaths;
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * Write leases under {@code /fastblock/leases/{volumeId}}, changed only by versioned compare-and-set
 * so two gateways asking at once cannot both be told they hold the lease, and the epoch never goes
 * back (the znode outlives expiry; only a volume's deletion removes it).
 */
public final class LeaseStore {
    private final CuratorFramework zk;

    public LeaseStore(CuratorFramework zk) {
        this.zk = zk;
    }

    public Optional<LeaseRecord> get(long volumeId) {
        try {
            byte[] raw = ZkCalls.run("read lease", () -> zk.getData().forPath(ZkPaths.lease(volumeId)));
            return Optional.of(MetaJson.read(raw, LeaseRecord.class));
        } catch (KeeperException.NoNodeException e) {
            return Optional.empty();
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("read lease of volume " + volumeId, e);
        }
    }

    /**
     * Gives {@code gateway} the lease for {@code ttlMillis}. The holder renewing keeps its epoch;
     * anyone else takes the lease over with the epoch raised by one (a free, expired or held lease
     * alike: the gateway that writes is the one that should hold it, as in a live migration).
     * With {@code renewEpoch} set, the call only renews: it fails with {@link LeaseLostException}
     * unless {@code gateway} still holds the lease with that epoch, so a gateway that lost the
     * lease never takes it back by renewing.
     */
    public LeaseRecord acquire(long volumeId, String volume, String gateway, long ttlMillis, long nowMillis,
                               Long renewEpoch) {
        String path = ZkPaths.lease(volumeId);
        while (true) {
            Stat stat = new Stat();
            LeaseRecord current;
            try {
                byte[] raw = ZkCalls.run("read lease", () -> zk.getData().storingStatIn(stat).forPath(path));
                current = MetaJson.read(raw, LeaseRecord.class);
            } catch (KeeperException.NoNodeException e) {
                current = null;
            } catch (KeeperException e) {
                throw ZkCalls.unexpected("read lease of " + volume, e);
            }
            LeaseRecord next = LeaseRules.next(current, volumeId, volume, gateway, ttlMillis, nowMillis, renewEpoch);
            try {
                if (current == null) {
                    ZkCalls.run("create lease", () -> zk.create().forPath(path, MetaJson.write(next)));
                } else {
                    ZkCalls.run("update lease", () -> zk.setData().withVersion(stat.getVersion())
                            .forPath(path, MetaJson.write(next)));
                }
                return next;
            } catch (KeeperException.NodeExistsException | KeeperException.BadVersionException e) {
                // another gateway's request changed it first: decide again on what it wrote
            } catch (KeeperException e) {
                throw ZkCalls.unexpected("write lease of " + volume, e);
            }
        }
    }

    /** Drops the lease of a deleted volume. */
    public void delete(long volumeId) {
        try {
            ZkCalls.run("delete lease", () -> zk.delete().forPath(ZkPaths.lease(volumeId)));
        } catch (KeeperException.NoNodeException e) {
            // none
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("delete lease of volume " + volumeId, e);
        }
    }
}
