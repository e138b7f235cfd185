package io.fastblock.namenode.layers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.namenode.meta.ExportStore;
import io.fastblock.namenode.meta.GroupStore;
import io.fastblock.namenode.meta.LayerStacks;
import io.fastblock.namenode.meta.LeaseStore;
import io.fastblock.namenode.meta.NodeStore;
import io.fastblock.namenode.meta.ReclaimQueue;
import io.fastblock.namenode.meta.VolumeStore;
import io.fastblock.namenode.meta.ZkTestSupport;
import io.fastblock.protocol.meta.ExportRecord;
import io.fastblock.protocol.meta.SealedIds;
import io.fastblock.protocol.meta.VolumeRecord;
import io.fastblock.protocol.meta.VolumeSource;
import io.fastblock.protocol.meta.ZkPaths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Every znode a volume makes is gone once it is deleted and its layers reclaimed: the volume's
 * record, chunk map, exports, snapshots, client-id claim, lease, layers, reclaim records and the
 * seals under fences/ (moved into the compact sealed-ids set, which storage servers also load).
 */
class ZnodeHygieneTest extends ZkTestSupport {
    private TreeSet<String> znodes() throws Exception {
        TreeSet<String> out = new TreeSet<>();
        walk(ZkPaths.ROOT, out);
        return out;
    }

    private void walk(String path, TreeSet<String> out) throws Exception {
        out.add(path);
        for (String c : zk.getChildren().forPath(path)) {
            walk(path + "/" + c, out);
        }
    }

    @Test
    void deleteAndReclaimLeaveOnlyTheSealedIds() throws Exception {
        VolumeStore volumes = new VolumeStore(zk);
        LayerStacks stacks = new LayerStacks(zk);
        volumes.create("keep", 1L << 30, 64L << 20); // a volume that stays: its znodes stay too
        TreeSet<String> before = znodes();

        VolumeRecord v = volumes.create(new VolumeStore.NewVolume("gone", 1L << 30, 64L << 20, null, null, "cid-1"))
                .volume();
        new ExportStore(zk).putIfAbsent(new ExportRecord("gone", ExportRecord.ANY_INITIATOR, null, null, null, null,
                null, "2026-01-01T00:00:00Z"));
        new LeaseStore(zk).acquire(v.id(), "gone", "gw-1", 15_000, System.currentTimeMillis(), null);
        new LeaseStore(zk).acquire(v.id(), "gone", "gw-2", 15_000, System.currentTimeMillis() + 60_000, null);
        new io.fastblock.namenode.meta.FenceStore(zk).raise(v.id(), 2); // what the lease move does through the API
        stacks.createSnapshot("gone", "s1", null);
        VolumeRecord clone = stacks.createClone(new VolumeStore.NewVolume("gone-clone", 0, 0, null, null, null),
                new VolumeSource("gone", "s1")).volume();
        TreeSet<String> full = znodes();
        assertTrue(full.size() > before.size() + 10, "the volumes made znodes: " + full);

        volumes.delete("gone-clone");
        new LeaseStore(zk).delete(clone.id());
        stacks.deleteSnapshot("gone", "s1");
        volumes.delete("gone");
        new LeaseStore(zk).delete(v.id());
        LayerReclaimer reclaimer = new LayerReclaimer(zk, new GroupStore(zk), new NodeStore(zk),
                LayerSealer.ZOOKEEPER_ONLY, Duration.ofSeconds(5));
        try {
            assertTrue(reclaimer.passOnce() >= 3, "the layers of gone and its clone reclaimed");
        } finally {
            reclaimer.close();
        }
        TreeSet<String> after = znodes();
        List<String> left = new ArrayList<>(after);
        left.removeAll(before);
        assertEquals(List.of(ZkPaths.SEALED_IDS), left, "left behind: " + left);
        List<String> lost = new ArrayList<>(before);
        lost.removeAll(after);
        assertEquals(List.of(), lost);
        SealedIds sealed = new ReclaimQueue(zk).sealedIds();
        for (long id : List.of(v.id(), clone.id())) {
            assertTrue(sealed.contains(id), id + " sealed in " + sealed);
        }
        assertTrue(sealed.ranges() <= 2, "compact: " + sealed);
    }
}
