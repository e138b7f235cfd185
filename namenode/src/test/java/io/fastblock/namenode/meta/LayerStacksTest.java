package io.fastblock.namenode.meta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.meta.LeaseRecord;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.ReclaimRecord;
import io.fastblock.protocol.meta.SnapshotRecord;
import io.fastblock.protocol.meta.VolumeFences;
import io.fastblock.protocol.meta.VolumeRecord;
import io.fastblock.protocol.meta.VolumeSource;
import io.fastblock.protocol.meta.ZkPaths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** Layer stacks on a real ZooKeeper: snapshots, clones, reverts, deletions and their races with allocation. */
class LayerStacksTest extends ZkTestSupport {
    private static final long GIB = 1L << 30;
    private static final long CHUNK = 1L << 20;

    private VolumeStore volumes() {
        return new VolumeStore(zk);
    }

    private LayerStacks stacks() {
        return new LayerStacks(zk);
    }

    private ChunkMapStore maps() {
        return new ChunkMapStore(zk);
    }

    private VolumeRecord volume(String name) {
        return volumes().require(name);
    }

    private List<ReclaimRecord> reclaims() {
        return new ReclaimQueue(zk).pending().stream().map(ReclaimQueue.Item::record).toList();
    }

    @Test
    void firstSnapshotMovesTheMapAndPushesAnEmptyTop() throws Exception {
        VolumeRecord v = volumes().create("vol1", GIB, CHUNK);
        assertEquals(v.id(), v.topLayer());
        maps().allocate("vol1", 0, () -> 7);
        maps().allocate("vol1", 5000, () -> 8); // a second bucket
        LayerStacks.Snapshotted s = stacks().createSnapshot("vol1", "s1", null);
        assertTrue(s.created());
        assertEquals(v.id(), s.sealedLayer());
        assertEquals(List.of(v.id()), s.snapshot().layers());
        VolumeRecord after = volume("vol1");
        assertEquals(2, after.layerStack().size());
        long top = after.topLayer();
        assertTrue(top > v.id());
        // The old map now lives under /fastblock/layers and the volume's own map znode is empty.
        assertEquals(OptionalInt.of(7), maps().lookupIn(ZkPaths.layerChunkMap(v.id()), 0));
        assertEquals(OptionalInt.of(8), maps().lookupIn(ZkPaths.layerChunkMap(v.id()), 5000));
        assertEquals(List.of(), zk.getChildren().forPath(ZkPaths.chunkMap("vol1")));
        assertEquals(OptionalInt.empty(), maps().lookup("vol1", 0));
        assertEquals(VolumeFences.SEALED, VolumeFences.read(zk, v.id()));
        // New allocations land in the new top; the snapshot's layer is untouched.
        assertEquals(9, maps().allocate("vol1", 0, () -> 9));
        assertEquals(OptionalInt.of(9), maps().lookupIn(ZkPaths.layerChunkMap(top), 0));
        assertEquals(OptionalInt.of(7), maps().lookupIn(ZkPaths.layerChunkMap(v.id()), 0));
        assertEquals(2, maps().allocatedCount("vol1"));
        // A later volume never gets an id a layer took.
        assertTrue(volumes().create("vol2", GIB, CHUNK).id() > top);
    }

    @Test
    void allocationNamingASealedLayerIsRefused() {
        VolumeRecord v = volumes().create("vol1", GIB, CHUNK);
        stacks().createSnapshot("vol1", "s1", null);
        assertThrows(StaleLayerException.class, () -> maps().allocate("vol1", v.id(), 3, () -> 1));
        long top = volume("vol1").topLayer();
        assertEquals(1, maps().allocate("vol1", top, 3, () -> 1));
    }

    @Test
    void snapshotNamesAreUniqueAndClientIdsMakeRepeatsIdempotent() {
        volumes().create("vol1", GIB, CHUNK);
        LayerStacks.Snapshotted a = stacks().createSnapshot("vol1", "s1", "req-1");
        LayerStacks.Snapshotted again = stacks().createSnapshot("vol1", "s1", "req-1");
        assertFalse(again.created());
        assertEquals(a.snapshot(), again.snapshot());
        assertThrows(SnapshotExistsException.class, () -> stacks().createSnapshot("vol1", "s1", null));
        assertThrows(VolumeNotFoundException.class, () -> stacks().createSnapshot("nope", "s1", null));
        stacks().createSnapshot("vol1", "s2", null);
        assertEquals(List.of("s1", "s2"), stacks().snapshots("vol1").stream().map(SnapshotRecord::name).toList());
        assertEquals(3, volume("vol1").layerStack().size());
    }

    @Test
    void snapshotCarriesTheLeaseEpochToTheNewTop() throws Exception {
        VolumeRecord v = volumes().create("vol1", GIB, CHUNK);
        new LeaseStore(zk).acquire(v.id(), "vol1", "gw-a", 10_000, 0, null);
        new LeaseStore(zk).acquire(v.id(), "vol1", "gw-b", 10_000, 1, null); // epoch 2
        stacks().createSnapshot("vol1", "s1", null);
        assertEquals(2, VolumeFences.read(zk, volume("vol1").topLayer()));
        LeaseRecord lease = new LeaseStore(zk).get(v.id()).orElseThrow();
        assertEquals(2, lease.epoch());
    }

    /**
     * Allocations racing with snapshots: every allocation that succeeded for layer L is found in
     * L's map afterwards, however the snapshot transactions interleaved with it.
     */
    @Test
    void allocationsRacingWithSnapshotsLandInTheLayerTheyNamed() throws Exception {
        volumes().create("vol1", 64 * GIB, CHUNK);
        Map<Long, Long> allocatedIn = new ConcurrentHashMap<>();
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        List<Future<?>> writers = new ArrayList<>();
        for (int t = 0; t < 3; t++) {
            int first = t;
            writers.add(pool.submit(() -> {
                ChunkMapStore m = maps();
                for (long chunk = first; !stop.get() || chunk < first + 60; chunk += 3) {
                    while (true) {
                        long layer = volumes().require("vol1").topLayer();
                        try {
                            m.allocate("vol1", layer, chunk, () -> 1);
                            allocatedIn.put(chunk, layer);
                            break;
                        } catch (StaleLayerException e) {
                            // the writer learns the new top and tries again, as the gateway does
                        }
                    }
                    if (chunk > 600) {
                        break;
                    }
                }
                return null;
            }));
        }
        for (int i = 0; i < 8; i++) {
            stacks().createSnapshot("vol1", "s" + i, null);
        }
        stop.set(true);
        for (Future<?> f : writers) {
            f.get();
        }
        pool.shutdown();
        assertTrue(allocatedIn.size() >= 60);
        for (Map.Entry<Long, Long> e : allocatedIn.entrySet()) {
            assertEquals(OptionalInt.of(1), maps().lookupIn(ZkPaths.layerChunkMap(e.getValue()), e.getKey()),
                    "chunk " + e.getKey() + " allocated in layer " + e.getValue());
        }
    }

    @Test
    void clonesOfSnapshotsAndVolumesShareLayersAndTakeTheSourceGeometry() throws Exception {
        VolumeRecord v = volumes().create("vol1", GIB, CHUNK);
        maps().allocate("vol1", 1, () -> 4);
        stacks().createSnapshot("vol1", "s1", null);
        LayerStacks.Changed c = stacks().createClone(new VolumeStore.NewVolume("clone1", 0, 0, null, null, "cl-1"),
                new VolumeSource("vol1", "s1"));
        assertTrue(c.created());
        assertEquals(-1, c.sealedLayer());
        VolumeRecord clone = c.volume();
        assertEquals(List.of(v.id(), clone.id()), clone.layerStack());
        assertEquals(GIB, clone.size());
        assertEquals(CHUNK, clone.chunkSize());
        assertEquals(new VolumeSource("vol1", "s1"), clone.source());
        assertEquals(clone, volume("clone1"));
        // Same client id, same request: the same clone. Another request with it: conflict.
        assertFalse(stacks().createClone(new VolumeStore.NewVolume("clone1", 0, 0, null, null, "cl-1"),
                new VolumeSource("vol1", "s1")).created());
        assertThrows(IdempotencyConflictException.class, () -> stacks().createClone(
                new VolumeStore.NewVolume("clone1", 2 * GIB, 0, null, null, "cl-1"), new VolumeSource("vol1", "s1")));
        assertThrows(VolumeExistsException.class, () -> stacks().createClone(
                new VolumeStore.NewVolume("clone1", 0, 0, null, null, null), new VolumeSource("vol1", "s1")));
        assertThrows(SourceNotFoundException.class, () -> stacks().createClone(
                new VolumeStore.NewVolume("c2", 0, 0, null, null, null), new VolumeSource("vol1", "nope")));
        assertThrows(IllegalArgumentException.class, () -> stacks().createClone(
                new VolumeStore.NewVolume("c2", GIB / 2, 0, null, null, null), new VolumeSource("vol1", "s1")));

        // Clone of a volume: the source gets a new top, its old top is sealed and shared.
        long srcTop = volume("vol1").topLayer();
        LayerStacks.Changed c2 = stacks().createClone(new VolumeStore.NewVolume("c2", 2 * GIB, 0, null, null, null),
                new VolumeSource("vol1", null));
        assertEquals(srcTop, c2.sealedLayer());
        assertEquals(VolumeFences.SEALED, VolumeFences.read(zk, srcTop));
        assertEquals(List.of(v.id(), srcTop, c2.volume().id()), c2.volume().layerStack());
        assertEquals(List.of(v.id(), srcTop, c2.volume().id() + 1), volume("vol1").layerStack());
        assertEquals(2 * GIB, c2.volume().size());
    }

    @Test
    void volumeWithSnapshotsCannotBeDeletedAndDeletionQueuesUnsharedLayers() throws Exception {
        VolumeRecord v = volumes().create("vol1", GIB, CHUNK);
        stacks().createSnapshot("vol1", "s1", null);
        LayerConflictException e = assertThrows(LayerConflictException.class, () -> volumes().delete("vol1"));
        assertEquals("VOLUME_HAS_SNAPSHOTS", e.code());
        assertTrue(e.getMessage().contains("s1"), e.getMessage());
        VolumeRecord clone = stacks().createClone(new VolumeStore.NewVolume("clone1", 0, 0, null, null, null),
                new VolumeSource("vol1", "s1")).volume();
        stacks().deleteSnapshot("vol1", "s1");
        // s1's layer is still used by the clone: nothing to trim in it.
        assertEquals(List.of(), reclaims());
        long top = volume("vol1").topLayer();
        assertTrue(volumes().delete("vol1"));
        assertNull(zk.checkExists().forPath(ZkPaths.volume("vol1")));
        assertEquals(List.of(top), reclaims().stream().map(ReclaimRecord::layerId).toList());
        assertTrue(reclaims().get(0).wholeLayer());
        assertEquals(VolumeFences.SEALED, VolumeFences.read(zk, top));
        // The clone still has its base layer's map.
        assertNotNull(zk.checkExists().forPath(ZkPaths.layerChunkMap(v.id())));
        assertTrue(volumes().delete("clone1"));
        assertEquals(java.util.stream.Stream.of(top, v.id(), clone.id()).sorted().toList(),
                reclaims().stream().map(ReclaimRecord::layerId).sorted().toList());
    }

    @Test
    void deletingALegacyVolumeKeepsItsMapForTheReclaimer() throws Exception {
        VolumeRecord v = volumes().create("vol1", GIB, CHUNK);
        maps().allocate("vol1", 2, () -> 3);
        assertTrue(volumes().delete("vol1"));
        assertEquals(OptionalInt.of(3), maps().lookupIn(ZkPaths.layerChunkMap(v.id()), 2));
        assertEquals(List.of(new ReclaimRecord(v.id(), List.of(), "volume vol1 deleted")), reclaims());
        new ReclaimQueue(zk).done(new ReclaimQueue(zk).pending().get(0));
        assertNull(zk.checkExists().forPath(ZkPaths.layer(v.id())));
        assertEquals(List.of(), reclaims());
    }

    @Test
    void deletingASnapshotUsedOnlyByTheVolumeTrimsWhatTheLayersAboveCover() {
        VolumeRecord v = volumes().create("vol1", GIB, CHUNK);
        stacks().createSnapshot("vol1", "s1", null);
        stacks().createSnapshot("vol1", "s2", null);
        List<Long> stack = volume("vol1").layerStack();
        stacks().deleteSnapshot("vol1", "s1");
        assertEquals(List.of(), reclaims(), "s2 still holds s1's layer");
        stacks().deleteSnapshot("vol1", "s2");
        List<ReclaimRecord> r = reclaims();
        assertEquals(2, r.size());
        assertEquals(new ReclaimRecord(v.id(), stack.subList(1, 3), "snapshot vol1/s2 deleted"), r.get(0));
        assertEquals(new ReclaimRecord(stack.get(1), stack.subList(2, 3), "snapshot vol1/s2 deleted"), r.get(1));
        assertThrows(SnapshotNotFoundException.class, () -> stacks().deleteSnapshot("vol1", "s2"));
    }

    @Test
    void revertOnlyToTheLatestSnapshotReplacesTheTop() throws Exception {
        volumes().create("vol1", GIB, CHUNK);
        stacks().createSnapshot("vol1", "s1", null);
        SnapshotRecord s2 = stacks().createSnapshot("vol1", "s2", null).snapshot();
        long oldTop = volume("vol1").topLayer();
        LayerConflictException e = assertThrows(LayerConflictException.class, () -> stacks().revert("vol1", "s1"));
        assertEquals("NOT_LATEST_SNAPSHOT", e.code());
        assertThrows(SnapshotNotFoundException.class, () -> stacks().revert("vol1", "nope"));
        LayerStacks.Changed r = stacks().revert("vol1", "s2");
        assertEquals(oldTop, r.sealedLayer());
        List<Long> stack = volume("vol1").layerStack();
        assertEquals(s2.layers(), stack.subList(0, stack.size() - 1));
        assertTrue(stack.get(stack.size() - 1) > oldTop);
        assertEquals(List.of(new ReclaimRecord(oldTop, List.of(), "volume vol1 reverted to s2")), reclaims());
        assertEquals(VolumeFences.SEALED, VolumeFences.read(zk, oldTop));
    }

    @Test
    void extendGrowsOnly() {
        volumes().create("vol1", GIB, CHUNK);
        assertEquals(2 * GIB, stacks().extend("vol1", 2 * GIB).size());
        assertEquals(2 * GIB, volume("vol1").size());
        assertThrows(IllegalArgumentException.class, () -> stacks().extend("vol1", GIB));
        assertThrows(VolumeNotFoundException.class, () -> stacks().extend("nope", GIB));
    }

    @Test
    void renameKeepsTheStackAndTheSnapshots() throws Exception {
        VolumeRecord v = volumes().create("vol1", GIB, CHUNK);
        stacks().createSnapshot("vol1", "s1", null);
        List<Long> stack = volume("vol1").layerStack();
        new VolumeEdits(zk).rename("vol1", "vol2");
        assertEquals(stack, volume("vol2").layerStack());
        SnapshotRecord s = stacks().snapshot("vol2", "s1").orElseThrow();
        assertEquals("vol2", s.volume());
        assertEquals(List.of(v.id()), s.layers());
    }

    @Test
    void recordsWithoutLayersReadBackAsSingleLayerVolumes() {
        VolumeRecord old = MetaJson.read(("{\"id\":4,\"name\":\"v\",\"size\":1024,\"blockSize\":512,"
                + "\"chunkSize\":1048576,\"state\":\"available\",\"createdAt\":\"t\"}").getBytes(), VolumeRecord.class);
        assertEquals(4, old.topLayer());
        assertEquals(List.of(4L), old.layerStack());
        assertFalse(old.layered());
        VolumeRecord layered = old.withLayers(List.of(4L, 9L));
        assertEquals(layered, MetaJson.read(MetaJson.write(layered), VolumeRecord.class));
        assertEquals(9, layered.topLayer());
    }
}
