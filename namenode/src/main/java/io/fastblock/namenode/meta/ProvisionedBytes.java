package io.fastblock.namenode.meta;

import io.fastblock.namenode.capacity.ProvisionGuard;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.VolumeRecord;
import io.fastblock.protocol.meta.ZkPaths;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * The sum of all volume sizes, kept in {@code /fastblock/counters/provisioned-bytes} (decimal) so
 * the thin-provisioning check of a create costs one read, not one per volume.
 *
 * <p>Every change of that sum (volume create, clone, delete, extend) puts a versioned write of the
 * counter into its own ZooKeeper transaction ({@link #add}): the counter and the volumes change
 * together or not at all, and concurrent changes serialize on the counter's version (the loser's
 * transaction fails and it decides again, re-checking the limit).
 *
 * <p>When the znode is missing (a cluster from before it existed, or an operator removed it) it is
 * rebuilt from the volume records. No volume can be created, deleted or resized while it is missing
 * (their transactions write it), and a rename in between is detected by the volumes' child version,
 * so the rebuilt figure is exact.
 */
public final class ProvisionedBytes {
    private final CuratorFramework zk;

    public ProvisionedBytes(CuratorFramework zk) {
        this.zk = zk;
    }

    /** The counter as read, with the znode version a transaction must find unchanged. */
    public record Reading(long bytes, int version) {
    }

    /** The provisioned total, bytes. */
    public long get() {
        return read().bytes();
    }

    /** Reads the counter, rebuilding it first if it is missing. */
    public Reading read() {
        while (true) {
            Stat stat = new Stat();
            try {
                byte[] raw = ZkCalls.run("read provisioned bytes",
                        () -> zk.getData().storingStatIn(stat).forPath(ZkPaths.PROVISIONED_BYTES));
                return new Reading(parse(raw), stat.getVersion());
            } catch (KeeperException.NoNodeException e) {
                rebuild();
            } catch (KeeperException e) {
                throw ZkCalls.unexpected("read provisioned bytes", e);
            }
        }
    }

    /** Reads the counter and asks {@code guard} about {@code more} bytes (nothing asked when {@code more <= 0}). */
    Reading admit(ProvisionGuard guard, long more) {
        Reading r = read();
        if (more > 0) {
            guard.admit(r.bytes(), more);
        }
        return r;
    }

    /** The transaction step that moves the counter from {@code r} by {@code delta} (fails if it changed since). */
    CuratorOp add(Reading r, long delta) {
        byte[] next = Long.toString(Math.max(0, r.bytes() + delta)).getBytes(StandardCharsets.US_ASCII);
        try {
            return zk.transactionOp().setData().withVersion(r.version()).forPath(ZkPaths.PROVISIONED_BYTES, next);
        } catch (Exception e) {
            throw new IllegalStateException("building a ZooKeeper operation: " + e, e);
        }
    }

    /** Sums the sizes of all volumes into a new counter znode (an existing one is left as it is). */
    void rebuild() {
        while (true) {
            try {
                Stat before = new Stat();
                List<String> names = ZkCalls.run("list volumes",
                        () -> zk.getChildren().storingStatIn(before).forPath(ZkPaths.VOLUMES));
                long sum = 0;
                for (String n : names) {
                    try {
                        byte[] raw = ZkCalls.run("read volume " + n, () -> zk.getData().forPath(ZkPaths.volume(n)));
                        sum += MetaJson.read(raw, VolumeRecord.class).size();
                    } catch (KeeperException.NoNodeException renamed) {
                        // the child-version check below notices and sums again
                    }
                }
                Stat after = ZkCalls.run("stat volumes", () -> zk.checkExists().forPath(ZkPaths.VOLUMES));
                if (after == null || after.getCversion() != before.getCversion()) {
                    continue;
                }
                long total = sum;
                ZkCalls.run("create provisioned bytes", () -> zk.create().creatingParentsIfNeeded()
                        .forPath(ZkPaths.PROVISIONED_BYTES, Long.toString(total).getBytes(StandardCharsets.US_ASCII)));
                return;
            } catch (KeeperException.NodeExistsException e) {
                return; // another namenode rebuilt it (to the same figure: nothing could change meanwhile)
            } catch (KeeperException.NoNodeException e) {
                ZkSchema.ensure(zk);
            } catch (KeeperException e) {
                throw ZkCalls.unexpected("rebuild provisioned bytes", e);
            }
        }
    }

    private static long parse(byte[] raw) {
        String text = new String(raw, StandardCharsets.US_ASCII).trim();
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new MetadataUnavailableException(ZkPaths.PROVISIONED_BYTES + " holds \"" + text
                    + "\", not a decimal byte count", e);
        }
    }
}
