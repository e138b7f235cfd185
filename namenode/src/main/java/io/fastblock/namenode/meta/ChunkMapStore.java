package io.fastblock.namenode.meta;

import io.fastblock.protocol.meta.ChunkMapBucket;
import io.fastblock.protocol.meta.ZkPaths;
import java.util.List;
import java.util.OptionalInt;
import java.util.function.IntSupplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * Which replication group holds each chunk of a volume: {@link ChunkMapBucket} znodes under
 * {@code /fastblock/volumes/{name}/chunkmap/{bucket}}, a missing bucket meaning "nothing allocated".
 *
 * <p>Allocation is a versioned read-modify-write: read the bucket and its version, return the group
 * already there, else assign one and write back only if nobody changed the bucket meanwhile. A lost
 * race re-reads and finds the winner's group, so concurrent allocations of a chunk agree on one group,
 * and allocations of different chunks in one bucket never overwrite each other.
 */
public final class ChunkMapStore {
    private final CuratorFramework zk;

    public ChunkMapStore(CuratorFramework zk) {
        this.zk = zk;
    }

    /** The group of a chunk, or empty if it was never allocated. Never writes. */
    public OptionalInt lookup(String volume, long chunkIndex) {
        String path = ZkPaths.chunkMapBucket(volume, ChunkMapBucket.bucketOf(chunkIndex));
        try {
            byte[] raw = ZkCalls.run("read chunk map of " + volume, () -> zk.getData().forPath(path));
            int group = ChunkMapBucket.decode(raw).groupOf(chunkIndex);
            return group == ChunkMapBucket.UNALLOCATED ? OptionalInt.empty() : OptionalInt.of(group);
        } catch (KeeperException.NoNodeException e) {
            return OptionalInt.empty();
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("read chunk map of " + volume, e);
        }
    }

    /**
     * The group of a chunk, assigning {@code chooser}'s group if it has none. {@code chooser} runs only
     * when an assignment is attempted and may throw to refuse (e.g. no groups exist yet).
     *
     * @throws VolumeNotFoundException if the volume does not exist (or was deleted meanwhile)
     */
    public int allocate(String volume, long chunkIndex, IntSupplier chooser) {
        String path = ZkPaths.chunkMapBucket(volume, ChunkMapBucket.bucketOf(chunkIndex));
        String what = "allocate chunk " + chunkIndex + " of " + volume;
        while (true) {
            Stat stat = new Stat();
            ChunkMapBucket bucket;
            boolean exists;
            try {
                byte[] raw = ZkCalls.run(what, () -> zk.getData().storingStatIn(stat).forPath(path));
                bucket = ChunkMapBucket.decode(raw);
                exists = true;
            } catch (KeeperException.NoNodeException e) {
                bucket = ChunkMapBucket.empty();
                exists = false;
            } catch (KeeperException e) {
                throw ZkCalls.unexpected(what, e);
            }
            int current = bucket.groupOf(chunkIndex);
            if (current != ChunkMapBucket.UNALLOCATED) {
                return current;
            }
            int group = chooser.getAsInt();
            bucket.assign(chunkIndex, group);
            byte[] encoded = bucket.encode();
            try {
                if (exists) {
                    ZkCalls.run(what, () -> zk.setData().withVersion(stat.getVersion()).forPath(path, encoded));
                } else {
                    // No creatingParentsIfNeeded: if the volume was deleted its chunkmap parent is gone and
                    // this fails instead of resurrecting a record-less volume path.
                    ZkCalls.run(what, () -> zk.create().forPath(path, encoded));
                }
                return group;
            } catch (KeeperException.BadVersionException | KeeperException.NodeExistsException e) {
                // Someone else wrote this bucket first: re-read and either adopt their group or retry.
            } catch (KeeperException.NoNodeException e) {
                throw new VolumeNotFoundException(volume);
            } catch (KeeperException e) {
                throw ZkCalls.unexpected(what, e);
            }
        }
    }

    /** How many chunks of the volume have a group (0 for a volume that does not exist). */
    public int allocatedCount(String volume) {
        List<String> buckets;
        try {
            buckets = ZkCalls.run("list chunk map of " + volume, () -> zk.getChildren().forPath(ZkPaths.chunkMap(volume)));
        } catch (KeeperException.NoNodeException e) {
            return 0;
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("list chunk map of " + volume, e);
        }
        int total = 0;
        for (String b : buckets) {
            String path = ZkPaths.chunkMap(volume) + "/" + b;
            try {
                total += ChunkMapBucket.decode(ZkCalls.run("read chunk map of " + volume,
                        () -> zk.getData().forPath(path))).allocatedCount();
            } catch (KeeperException.NoNodeException e) {
                // deleted meanwhile
            } catch (KeeperException e) {
                throw ZkCalls.unexpected("read chunk map of " + volume, e);
            }
        }
        return total;
    }

    /** Adds the volume's allocated chunks per group into {@code counts}. */
    public void countByGroup(String volume, java.util.Map<Integer, Long> counts) {
        List<String> buckets;
        try {
            buckets = ZkCalls.run("list chunk map of " + volume, () -> zk.getChildren().forPath(ZkPaths.chunkMap(volume)));
        } catch (KeeperException.NoNodeException e) {
            return;
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("list chunk map of " + volume, e);
        }
        for (String b : buckets) {
            String path = ZkPaths.chunkMap(volume) + "/" + b;
            try {
                ChunkMapBucket bucket = ChunkMapBucket.decode(ZkCalls.run("read chunk map of " + volume,
                        () -> zk.getData().forPath(path)));
                long base = Long.parseLong(b) * ChunkMapBucket.CHUNKS_PER_BUCKET;
                for (int i = 0; i < ChunkMapBucket.CHUNKS_PER_BUCKET; i++) {
                    int g = bucket.groupOf(base + i);
                    if (g != ChunkMapBucket.UNALLOCATED) {
                        counts.merge(g, 1L, Long::sum);
                    }
                }
            } catch (KeeperException.NoNodeException e) {
                // deleted meanwhile
            } catch (KeeperException e) {
                throw ZkCalls.unexpected("read chunk map of " + volume, e);
            }
        }
    }
}
