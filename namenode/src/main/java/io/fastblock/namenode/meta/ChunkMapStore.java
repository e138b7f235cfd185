package io.fastblock.namenode.meta;

import io.fastblock.protocol.meta.ChunkMapBucket;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.VolumeRecord;
import io.fastblock.protocol.meta.ZkPaths;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * Which replication group holds each chunk of a layer: {@link ChunkMapBucket} znodes, a missing
 * bucket meaning "nothing allocated". A volume's writes go to its top layer (docs/snapshots.md);
 * the map of a volume never snapshotted is still under the volume's znode
 * ({@code /fastblock/volumes/{name}/chunkmap}), every other layer's under
 * {@code /fastblock/layers/{id}/chunkmap}.
 *
 * <p>Allocation is one ZooKeeper transaction: a check of the volume record's version (so an
 * allocation never lands in a layer a concurrent snapshot has just frozen), the bucket's versioned
 * write and, when the bucket is new, a write of the map's parent znode (whose version a snapshot
 * that moves the map checks, so no bucket is created behind its back). A lost race re-reads and
 * finds the winner's group, so concurrent allocations of a chunk agree on one group.
 *
 * <p>Allocations of one bucket through one store take turns ({@link #BUCKET_LOCKS} locks, striped by
 * volume name and bucket number): a gateway's first writes allocate every chunk they touch at once, all in the
 * same bucket, and without turns each of n allocations lost up to n - 1 races (16 at once took 84
 * attempts). Races with another store, such as a namenode that has just lost the leadership, are
 * still settled by the versioned write.
 */
public final class ChunkMapStore {
    /** Locks that allocations of one bucket share; a power of two. */
    static final int BUCKET_LOCKS = 64;

    /**
     * Chooses the group of a chunk being allocated. {@link #choose} runs once per attempt; an
     * attempt that lost a race (its group was not stored) is reported to {@link #notStored}, so a
     * chooser that counts its choices counts only the stored ones.
     */
    public interface GroupChooser {
        int choose();

        default void notStored(int group) {
        }
    }

    private final CuratorFramework zk;
    private final ReentrantLock[] bucketLocks = new ReentrantLock[BUCKET_LOCKS];

    public ChunkMapStore(CuratorFramework zk) {
        this.zk = zk;
        for (int i = 0; i < BUCKET_LOCKS; i++) {
            bucketLocks[i] = new ReentrantLock();
        }
    }

    /** Where layer {@code layer} of volume {@code v} keeps its chunk map. */
    public static String mapPath(VolumeRecord v, long layer) {
        return v.layered() ? ZkPaths.layerChunkMap(layer) : ZkPaths.chunkMap(v.name());
    }

    /**
     * The group of a chunk in the volume's top layer, or empty if it was never allocated there (or
     * the volume does not exist). Never writes.
     */
    public OptionalInt lookup(String volume, long chunkIndex) {
        VolumeRecord v;
        try {
            v = readVolume(volume, null);
        } catch (VolumeNotFoundException e) {
            return OptionalInt.empty();
        }
        return lookupIn(mapPath(v, v.topLayer()), chunkIndex);
    }

    /** The group of a chunk in the chunk map at {@code mapPath}, or empty. Never writes. */
    public OptionalInt lookupIn(String mapPath, long chunkIndex) {
        String path = mapPath + "/" + ChunkMapBucket.bucketOf(chunkIndex);
        try {
            byte[] raw = ZkCalls.run("read chunk map " + mapPath, () -> zk.getData().forPath(path));
            int group = ChunkMapBucket.decode(raw).groupOf(chunkIndex);
            return group == ChunkMapBucket.UNALLOCATED ? OptionalInt.empty() : OptionalInt.of(group);
        } catch (KeeperException.NoNodeException e) {
            return OptionalInt.empty();
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("read chunk map " + mapPath, e);
        }
    }

    public int allocate(String volume, long chunkIndex, GroupChooser chooser) {
        return allocate(volume, null, chunkIndex, chooser);
    }

    /**
     * The group of a chunk in the volume's top layer, assigning {@code chooser}'s group if it has
     * none. {@code chooser} runs only when an assignment is attempted and may throw to refuse.
     *
     * @param expectedLayer the layer the caller will write with (null: whichever is on top)
     * @throws VolumeNotFoundException if the volume does not exist (or was deleted meanwhile)
     * @throws StaleLayerException if {@code expectedLayer} is no longer the volume's top layer
     */
    public int allocate(String volume, Long expectedLayer, long chunkIndex, GroupChooser chooser) {
        String what = "allocate chunk " + chunkIndex + " of " + volume;
        ReentrantLock turn = bucketLocks[(volume.hashCode() * 31 + Long.hashCode(ChunkMapBucket.bucketOf(chunkIndex)))
                & (BUCKET_LOCKS - 1)];
        turn.lock();
        try {
            return allocateInTurn(volume, expectedLayer, chunkIndex, chooser, what);
        } finally {
            turn.unlock();
        }
    }

    private int allocateInTurn(String volume, Long expectedLayer, long chunkIndex, GroupChooser chooser, String what) {
        while (true) {
            Stat volumeStat = new Stat();
            VolumeRecord v = readVolume(volume, volumeStat);
            if (expectedLayer != null && expectedLayer != v.topLayer()) {
                throw new StaleLayerException(volume, expectedLayer, v.topLayer());
            }
            String mapPath = mapPath(v, v.topLayer());
            String path = mapPath + "/" + ChunkMapBucket.bucketOf(chunkIndex);
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
            int group = chooser.choose();
            bucket.assign(chunkIndex, group);
            byte[] encoded = bucket.encode();
            boolean existed = exists;
            try {
                ZkCalls.run(what, () -> {
                    List<CuratorOp> ops = new ArrayList<>();
                    ops.add(zk.transactionOp().check().withVersion(volumeStat.getVersion())
                            .forPath(ZkPaths.volume(volume)));
                    if (existed) {
                        ops.add(zk.transactionOp().setData().withVersion(stat.getVersion()).forPath(path, encoded));
                    } else {
                        // No parent creation: if the map was moved or deleted this fails instead of resurrecting it.
                        ops.add(zk.transactionOp().create().forPath(path, encoded));
                        ops.add(zk.transactionOp().setData().forPath(mapPath, new byte[0]));
                    }
                    return zk.transaction().forOperations(ops);
                });
                return group;
            } catch (KeeperException.BadVersionException | KeeperException.NodeExistsException
                     | KeeperException.NoNodeException e) {
                // Someone else wrote this bucket or the volume record first (or the volume went):
                // re-read and either adopt their group, retry, or report the volume gone.
                chooser.notStored(group);
            } catch (KeeperException e) {
                chooser.notStored(group);
                throw ZkCalls.unexpected(what, e);
            }
        }
    }

    private VolumeRecord readVolume(String volume, Stat stat) {
        try {
            byte[] raw = ZkCalls.run("read volume " + volume, () -> stat == null
                    ? zk.getData().forPath(ZkPaths.volume(volume))
                    : zk.getData().storingStatIn(stat).forPath(ZkPaths.volume(volume)));
            return MetaJson.read(raw, VolumeRecord.class);
        } catch (KeeperException.NoNodeException e) {
            throw new VolumeNotFoundException(volume);
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("read volume " + volume, e);
        }
    }

    /** The buckets of the chunk map at {@code mapPath}, by bucket number (empty if there is no such map). */
    public Map<Long, ChunkMapBucket> buckets(String mapPath) {
        List<String> names;
        try {
            names = ZkCalls.run("list chunk map " + mapPath, () -> zk.getChildren().forPath(mapPath));
        } catch (KeeperException.NoNodeException e) {
            return Map.of();
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("list chunk map " + mapPath, e);
        }
        Map<Long, ChunkMapBucket> out = new java.util.TreeMap<>();
        for (String b : names) {
            String path = mapPath + "/" + b;
            try {
                out.put(Long.parseLong(b), ChunkMapBucket.decode(ZkCalls.run("read chunk map " + mapPath,
                        () -> zk.getData().forPath(path))));
            } catch (KeeperException.NoNodeException e) {
                // deleted meanwhile
            } catch (KeeperException e) {
                throw ZkCalls.unexpected("read chunk map " + mapPath, e);
            }
        }
        return out;
    }

    /**
     * How many chunks of the volume hold data in at least one of its layers (0 for a volume that
     * does not exist).
     */
    public int allocatedCount(String volume) {
        VolumeRecord v;
        try {
            v = readVolume(volume, null);
        } catch (VolumeNotFoundException e) {
            return 0;
        }
        if (!v.layered()) {
            int total = 0;
            for (ChunkMapBucket b : buckets(ZkPaths.chunkMap(volume)).values()) {
                total += b.allocatedCount();
            }
            return total;
        }
        BitSet any = new BitSet();
        for (long layer : v.layerStack()) {
            for (Map.Entry<Long, ChunkMapBucket> e : buckets(ZkPaths.layerChunkMap(layer)).entrySet()) {
                long base = e.getKey() * ChunkMapBucket.CHUNKS_PER_BUCKET;
                for (int i = 0; i < ChunkMapBucket.CHUNKS_PER_BUCKET; i++) {
                    if (e.getValue().groupOf(base + i) != ChunkMapBucket.UNALLOCATED) {
                        any.set(Math.toIntExact(base + i));
                    }
                }
            }
        }
        return any.cardinality();
    }

    /** Adds the chunks allocated in the volume's top layer per group into {@code counts}. */
    public void countByGroup(String volume, Map<Integer, Long> counts) {
        VolumeRecord v;
        try {
            v = readVolume(volume, null);
        } catch (VolumeNotFoundException e) {
            return;
        }
        for (Map.Entry<Long, ChunkMapBucket> e : buckets(mapPath(v, v.topLayer())).entrySet()) {
            long base = e.getKey() * ChunkMapBucket.CHUNKS_PER_BUCKET;
            for (int i = 0; i < ChunkMapBucket.CHUNKS_PER_BUCKET; i++) {
                int g = e.getValue().groupOf(base + i);
                if (g != ChunkMapBucket.UNALLOCATED) {
                    counts.merge(g, 1L, Long::sum);
                }
            }
        }
    }
}
