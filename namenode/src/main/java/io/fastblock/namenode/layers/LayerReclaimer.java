package io.fastblock.namenode.layers;

import io.fastblock.namenode.meta.ChunkMapStore;
import io.fastblock.namenode.meta.GroupStore;
import io.fastblock.namenode.meta.NodeStore;
import io.fastblock.namenode.meta.ReclaimQueue;
import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.Extents;
import io.fastblock.protocol.client.BlockingStorageClient;
import io.fastblock.protocol.meta.ChunkMapBucket;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.LayerRecord;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.NodeRecord;
import io.fastblock.protocol.meta.ReclaimRecord;
import io.fastblock.protocol.meta.VolumeFences;
import io.fastblock.protocol.meta.ZkPaths;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leader's background worker that gives space back (docs/snapshots.md, "Reclaim"). For each
 * queued {@link ReclaimRecord}, oldest first: a whole layer is sealed on every live server (a
 * gateway that has not noticed yet cannot write into it behind the trims), then every chunk its
 * map lists is trimmed whole through its chain, then its znodes go with the record; a shadowed
 * layer gets, in each of its chunks, the 4 KiB blocks trimmed that a layer above it has allocated
 * (EXTENTS of the layers above). Trims carry the epoch {@link VolumeFences#SEALED}: the one epoch a
 * sealed layer still admits a trim with (the namenode never hands it to a gateway).
 *
 * <p>A pass that fails (a server down, a chain being repaired) leaves the record queued; the next
 * pass does it again: trims are idempotent.
 */
public final class LayerReclaimer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LayerReclaimer.class);
    private final CuratorFramework zk;
    private final ReclaimQueue queue;
    private final ChunkMapStore maps;
    private final GroupStore groups;
    private final NodeStore nodes;
    private final LayerSealer sealer;
    private final Duration timeout;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "layer-reclaimer");
        t.setDaemon(true);
        return t;
    });

    public LayerReclaimer(CuratorFramework zk, GroupStore groups, NodeStore nodes, LayerSealer sealer,
                          Duration timeout) {
        this.zk = zk;
        this.queue = new ReclaimQueue(zk);
        this.maps = new ChunkMapStore(zk);
        this.groups = groups;
        this.nodes = nodes;
        this.sealer = sealer;
        this.timeout = timeout;
    }

    public void start(Duration every) {
        timer.scheduleWithFixedDelay(() -> {
            try {
                passOnce();
            } catch (RuntimeException e) {
                LOG.warn("reclaim pass failed: {}", e.toString());
            }
        }, every.toMillis(), every.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Does every queued record it can; returns how many it finished. */
    public int passOnce() {
        int done = 0;
        for (ReclaimQueue.Item item : queue.pending()) {
            try {
                reclaim(item.record());
                queue.done(item);
                done++;
            } catch (IOException | RuntimeException e) {
                LOG.warn("reclaim of layer {} ({}) not finished, will retry: {}", item.record().layerId(),
                        item.record().reason(), e.toString());
            }
        }
        return done;
    }

    private void reclaim(ReclaimRecord r) throws IOException {
        long layer = r.layerId();
        long chunkSize = chunkSizeOf(layer);
        if (chunkSize <= 0) {
            return; // the layer's record is gone: an earlier pass finished everything but the queue entry
        }
        if (r.wholeLayer()) {
            sealer.seal(layer);
        }
        long trimmedBytes = 0;
        for (Map.Entry<Long, ChunkMapBucket> e : maps.buckets(ZkPaths.layerChunkMap(layer)).entrySet()) {
            long base = e.getKey() * ChunkMapBucket.CHUNKS_PER_BUCKET;
            for (int i = 0; i < ChunkMapBucket.CHUNKS_PER_BUCKET; i++) {
                int group = e.getValue().groupOf(base + i);
                if (group == ChunkMapBucket.UNALLOCATED) {
                    continue;
                }
                long index = base + i;
                if (r.wholeLayer()) {
                    trim(group, new ChunkId(layer, index), 0, chunkSize);
                    trimmedBytes += chunkSize;
                } else {
                    trimmedBytes += trimAll(group, new ChunkId(layer, index), coveredAbove(r, index, chunkSize));
                }
            }
        }
        LOG.info("reclaimed layer {} ({}): {} bytes trimmed{}", layer, r.reason(), trimmedBytes,
                r.wholeLayer() ? ", layer removed" : " under the layers above");
    }

    /** The blocks of chunk {@code index} that some layer of {@code r.shadowedBy()} has allocated. */
    private Extents coveredAbove(ReclaimRecord r, long index, long chunkSize) throws IOException {
        java.util.List<Extents.Range> all = new java.util.ArrayList<>();
        for (long above : r.shadowedBy()) {
            OptionalInt g = maps.lookupIn(ZkPaths.layerChunkMap(above), index);
            if (g.isEmpty()) {
                continue;
            }
            Route route = route(g.getAsInt());
            long epoch = floorOf(above);
            try (BlockingStorageClient c = new BlockingStorageClient(route.head().host(), route.head().port(), timeout)) {
                Extents ex = c.extents(new ChainAddress(route.group().id(), route.group().chainVersion(), epoch),
                        new ChunkId(above, index), 0, Math.toIntExact(chunkSize));
                all.addAll(ex.ranges());
            }
        }
        all.sort(java.util.Comparator.comparingLong(Extents.Range::offset)); // the builder merges ascending ranges
        Extents.Builder merged = new Extents.Builder();
        for (Extents.Range range : all) {
            merged.add(range.offset(), range.length());
        }
        return merged.build();
    }

    private void trim(int group, ChunkId chunk, long offset, long length) throws IOException {
        trimAll(group, chunk, new Extents.Builder().add(offset, length).build());
    }

    /**
     * Trims every range of {@code ranges} in {@code chunk}, one after the other over one connection
     * to the chain's head, and returns the bytes trimmed. Why one: after random overwrites a shadowed
     * chunk holds hundreds to thousands of separate 4 KiB ranges, and a route lookup (ZooKeeper reads)
     * and a new connection for each made a snapshot's reclaim take most of a minute for 256 MiB
     * written (SnapshotSpaceIT; docs/performance.md, "A snapshot's reclaim").
     */
    private long trimAll(int group, ChunkId chunk, Extents ranges) throws IOException {
        if (ranges.ranges().isEmpty()) {
            return 0;
        }
        Route route = route(group);
        ChainAddress chain = new ChainAddress(group, route.group().chainVersion(), VolumeFences.SEALED);
        long trimmed = 0;
        try (BlockingStorageClient c = new BlockingStorageClient(route.head().host(), route.head().port(), timeout)) {
            for (Extents.Range range : ranges.ranges()) {
                c.trim(chain, chunk, range.offset(), Math.toIntExact(range.length()));
                trimmed += range.length();
            }
        }
        return trimmed;
    }

    private record Route(GroupRecord group, NodeRecord head) {
    }

    private Route route(int groupId) throws IOException {
        GroupRecord g = groups.get(groupId).map(GroupStore.Versioned::group)
                .orElseThrow(() -> new IOException("group " + groupId + " does not exist"));
        if (g.members().isEmpty()) {
            throw new IOException("group " + groupId + " has no members");
        }
        NodeStore.NodeState head = nodes.all().get(g.head());
        if (head == null) {
            throw new IOException("head " + g.head() + " of group " + groupId + " is not registered");
        }
        return new Route(g, head.record());
    }

    /** The epoch a request to a layer must carry at least (its recorded floor; 0 when none). */
    private long floorOf(long layer) {
        try {
            long floor = VolumeFences.read(zk, layer);
            return floor == VolumeFences.SEALED ? 0 : floor;
        } catch (Exception e) {
            throw new IllegalStateException("read fence of layer " + layer + ": " + e, e);
        }
    }

    private long chunkSizeOf(long layer) {
        try {
            byte[] raw = zk.getData().forPath(ZkPaths.layer(layer));
            return MetaJson.read(raw, LayerRecord.class).chunkSize();
        } catch (org.apache.zookeeper.KeeperException.NoNodeException e) {
            return -1;
        } catch (Exception e) {
            throw new IllegalStateException("read layer " + layer + ": " + e, e);
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
