package io.fastblock.namenode.placement;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.namenode.meta.ChunkMapStore;
import io.fastblock.namenode.meta.GroupStore;
import io.fastblock.namenode.meta.NodeStore;
import io.fastblock.namenode.meta.VolumeStore;
import io.fastblock.namenode.meta.ZkTestSupport;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.NodeRecord;
import io.fastblock.protocol.meta.VolumeRecord;
import io.fastblock.protocol.meta.ZkPaths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Placement of chunks that are allocated at once, as a gateway's first writes to a fresh volume
 * allocate them: a real ZooKeeper, three real groups, the chunk map store the API uses.
 */
class ConcurrentPlacementTest extends ZkTestSupport {
    private GroupFormation formation;
    private ChunkMapStore chunkMaps;
    private ChunkPlacement placement;
    private VolumeRecord volume;

    @BeforeEach
    void start() throws Exception {
        GroupStore groups = new GroupStore(zk);
        NodeStore nodes = new NodeStore(zk);
        for (String id : List.of("a", "b", "c")) {
            zk.create().forPath(ZkPaths.node(id), MetaJson.write(new NodeRecord(id, "127.0.0.1", 9401, 1, 1)));
            zk.create().withMode(CreateMode.EPHEMERAL).forPath(ZkPaths.live(id));
        }
        formation = new GroupFormation(zk, groups, nodes);
        assertTrue(formation.check());
        assertEquals(3, groups.list().size());
        VolumeStore volumes = new VolumeStore(zk);
        volume = volumes.create("vol1", 64L << 20, 1L << 20);
        chunkMaps = new ChunkMapStore(zk);
        placement = new ChunkPlacement(groups, nodes, volumes, chunkMaps);
    }

    @AfterEach
    void stop() {
        formation.close();
    }

    private Map<Integer, Long> stored() {
        Map<Integer, Long> out = new HashMap<>();
        chunkMaps.countByGroup("vol1", out);
        return out;
    }

    @Test
    void chunksAllocatedAtOnceSpreadEvenly() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(12);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Integer>> done = new ArrayList<>();
            for (int i = 0; i < 12; i++) {
                long chunk = i;
                done.add(pool.submit(() -> {
                    go.await();
                    return chunkMaps.allocate("vol1", chunk, placement.chooser(volume.id(), chunk));
                }));
            }
            go.countDown();
            for (Future<Integer> f : done) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(Map.of(1, 4L, 2, 4L, 3, 4L), stored());
        assertEquals(stored(), placement.counts());
    }

    /**
     * Allocates chunk 0 through the placement, running {@code meanwhile} with the first choice after
     * that choice is made and before it is written, as a race with another namenode would.
     */
    private void allocateChunk0Racing(java.util.function.IntConsumer meanwhile) {
        ChunkMapStore.GroupChooser mine = placement.chooser(volume.id(), 0);
        boolean[] raced = {false};
        chunkMaps.allocate("vol1", 0, new ChunkMapStore.GroupChooser() {
            @Override
            public int choose() {
                int g = mine.choose();
                if (!raced[0]) {
                    raced[0] = true;
                    meanwhile.accept(g);
                }
                return g;
            }

            @Override
            public void notStored(int group) {
                mine.notStored(group);
            }
        });
    }

    @Test
    void aChoiceThatLostARaceIsNotCounted() {
        ChunkMapStore otherNamenode = new ChunkMapStore(zk);
        // Another allocation writes the bucket between this attempt's read and write.
        allocateChunk0Racing(g -> otherNamenode.allocate("vol1", 1, placement.chooser(volume.id(), 1)));
        assertEquals(2, stored().values().stream().mapToLong(Long::longValue).sum());
        assertEquals(stored(), placement.counts(), "three choices were made, two were stored");
    }

    @Test
    void aChoiceLostAcrossALeadershipChangeIsNotGivenBackToCountsThatNeverHeldIt() {
        ChunkMapStore otherNamenode = new ChunkMapStore(zk);
        allocateChunk0Racing(g -> {
            otherNamenode.allocate("vol1", 1, () -> g); // the bucket changes: this attempt will lose
            placement.forgetCounts(); // leadership changed hands meanwhile
            otherNamenode.allocate("vol1", 2, placement.chooser(volume.id(), 2)); // relearns: chunk 1 counted
        });
        assertEquals(3, stored().values().stream().mapToLong(Long::longValue).sum());
        assertEquals(stored(), placement.counts());
    }
}
