package io.fastblock.namenode.meta;

import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.VolumeRecord;
import io.fastblock.protocol.meta.ZkPaths;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * Volume records under {@code /fastblock/volumes/{name}}.
 *
 * <p>Creation is one ZooKeeper transaction: create the volume znode, create its (empty) chunk map
 * parent, and advance the id counter with a versioned set. So a name is taken at most once even
 * when two requests race (the second create fails with NodeExists), and two volumes never share an
 * id (the second counter update fails on the version and retries with a fresh id).
 */
public final class VolumeStore {
    public static final int BLOCK_SIZE = 512;
    public static final String STATE_AVAILABLE = "available";

    private final CuratorFramework zk;

    public VolumeStore(CuratorFramework zk) {
        this.zk = zk;
    }

    public VolumeRecord create(String name, long size, long chunkSize) {
        String createdAt = Instant.now().truncatedTo(ChronoUnit.MILLIS).toString();
        while (true) {
            Stat counterStat = new Stat();
            long id;
            try {
                byte[] raw = ZkCalls.run("read volume id counter",
                        () -> zk.getData().storingStatIn(counterStat).forPath(ZkPaths.VOLUME_ID_COUNTER));
                id = Long.parseLong(new String(raw, StandardCharsets.US_ASCII).trim());
            } catch (KeeperException.NoNodeException e) {
                ZkSchema.ensure(zk);
                continue;
            } catch (KeeperException e) {
                throw ZkCalls.unexpected("read volume id counter", e);
            }
            VolumeRecord record = new VolumeRecord(id, name, size, BLOCK_SIZE, chunkSize, STATE_AVAILABLE, createdAt);
            byte[] next = Long.toString(id + 1).getBytes(StandardCharsets.US_ASCII);
            try {
                ZkCalls.run("create volume " + name, () -> zk.transaction().forOperations(
                        zk.transactionOp().create().forPath(ZkPaths.volume(name), MetaJson.write(record)),
                        zk.transactionOp().create().forPath(ZkPaths.chunkMap(name)),
                        zk.transactionOp().setData().withVersion(counterStat.getVersion())
                                .forPath(ZkPaths.VOLUME_ID_COUNTER, next)));
                return record;
            } catch (KeeperException.NodeExistsException e) {
                throw new VolumeExistsException(name);
            } catch (KeeperException.BadVersionException e) {
                // Another create took this id first; read the counter again.
            } catch (KeeperException.NoNodeException e) {
                ZkSchema.ensure(zk);
            } catch (KeeperException e) {
                throw ZkCalls.unexpected("create volume " + name, e);
            }
        }
    }

    public Optional<VolumeRecord> get(String name) {
        try {
            byte[] raw = ZkCalls.run("read volume " + name, () -> zk.getData().forPath(ZkPaths.volume(name)));
            return Optional.of(MetaJson.read(raw, VolumeRecord.class));
        } catch (KeeperException.NoNodeException e) {
            return Optional.empty();
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("read volume " + name, e);
        }
    }

    public VolumeRecord require(String name) {
        return get(name).orElseThrow(() -> new VolumeNotFoundException(name));
    }

    /** All volumes, oldest (lowest id) first. */
    public List<VolumeRecord> list() {
        List<String> names;
        try {
            names = ZkCalls.run("list volumes", () -> zk.getChildren().forPath(ZkPaths.VOLUMES));
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("list volumes", e);
        }
        List<VolumeRecord> out = new ArrayList<>(names.size());
        for (String n : names) {
            get(n).ifPresent(out::add); // a volume deleted meanwhile is simply not listed
        }
        out.sort(Comparator.comparingLong(VolumeRecord::id));
        return out;
    }

    /**
     * Removes the volume record and its chunk map. Returns false if there was no such volume.
     * The data the storage servers hold for it is not reclaimed yet (a later piece of work).
     */
    public boolean delete(String name) {
        String path = ZkPaths.volume(name);
        for (int attempt = 0; ; attempt++) {
            try {
                ZkCalls.run("delete volume " + name, () -> zk.delete().deletingChildrenIfNeeded().forPath(path));
                return true;
            } catch (KeeperException.NoNodeException e) {
                return false;
            } catch (KeeperException.NotEmptyException e) {
                // A chunk map bucket appeared while deleting (a concurrent allocation); go again.
                if (attempt >= 20) {
                    throw ZkCalls.unexpected("delete volume " + name, e);
                }
            } catch (KeeperException e) {
                throw ZkCalls.unexpected("delete volume " + name, e);
            }
        }
    }
}
