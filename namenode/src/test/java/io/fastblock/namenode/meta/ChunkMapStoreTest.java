package io.fastblock.namenode.meta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.meta.ChunkMapBucket;
import io.fastblock.protocol.meta.ZkPaths;
import java.util.HashSet;
import java.util.List;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ChunkMapStoreTest extends ZkTestSupport {
    private ChunkMapStore chunks;

    @BeforeEach
    void volume() {
        new VolumeStore(zk).create("vol1", 1L << 40, 1L << 20); // 1 TiB in 1 MiB chunks: 256 buckets
        chunks = new ChunkMapStore(zk);
    }

    @Test
    void lookupOfUnallocatedChunkWritesNothing() throws Exception {
        assertTrue(chunks.lookup("vol1", 5).isEmpty());
        assertTrue(chunks.lookup("vol1", 5000).isEmpty());
        assertEquals(List.of(), zk.getChildren().forPath(ZkPaths.chunkMap("vol1")));
        assertEquals(0, chunks.allocatedCount("vol1"));
    }

    @Test
    void allocateIsIdempotent() throws Exception {
        AtomicInteger chooserCalls = new AtomicInteger();
        assertEquals(2, chunks.allocate("vol1", 5, () -> {
            chooserCalls.incrementAndGet();
            return 2;
        }));
        assertEquals(2, chunks.allocate("vol1", 5, () -> {
            chooserCalls.incrementAndGet();
            return 3;
        }));
        assertEquals(1, chooserCalls.get());
        assertEquals(OptionalInt.of(2), chunks.lookup("vol1", 5));
        assertTrue(chunks.lookup("vol1", 6).isEmpty());
        assertEquals(1, chunks.allocatedCount("vol1"));
        assertEquals(List.of("0"), zk.getChildren().forPath(ZkPaths.chunkMap("vol1")));
    }

    @Test
    void chunksInLaterBucketsGetTheirOwnZnode() throws Exception {
        long far = 3L * ChunkMapBucket.CHUNKS_PER_BUCKET + 7;
        chunks.allocate("vol1", far, () -> 4);
        chunks.allocate("vol1", 0, () -> 1);
        assertEquals(Set.of("0", "3"), new HashSet<>(zk.getChildren().forPath(ZkPaths.chunkMap("vol1"))));
        assertEquals(OptionalInt.of(4), chunks.lookup("vol1", far));
        assertEquals(2, chunks.allocatedCount("vol1"));
    }

    @Test
    void concurrentAllocationsOfOneChunkAgreeOnOneGroup() throws Exception {
        // Each thread proposes a different group, so agreement can only come from the versioned write.
        List<Integer> results = VolumeStoreTest.race(8, i -> chunks.allocate("vol1", 42, () -> 10 + i));
        Set<Integer> distinct = new HashSet<>(results);
        assertEquals(1, distinct.size(), "results " + results);
        int group = results.get(0);
        assertTrue(group >= 10 && group < 18);
        assertEquals(OptionalInt.of(group), chunks.lookup("vol1", 42));
    }

    @Test
    void concurrentAllocationsOfDifferentChunksInOneBucketAreAllKept() throws Exception {
        VolumeStoreTest.race(8, i -> {
            for (int c = 0; c < 8; c++) {
                int chunk = i * 8 + c;
                chunks.allocate("vol1", chunk, () -> chunk + 1);
            }
            return null;
        });
        for (int chunk = 0; chunk < 64; chunk++) {
            assertEquals(OptionalInt.of(chunk + 1), chunks.lookup("vol1", chunk), "chunk " + chunk);
        }
        assertEquals(64, chunks.allocatedCount("vol1"));
    }

    @Test
    void refusalFromChooserAllocatesNothing() throws Exception {
        assertThrows(IllegalStateException.class, () -> chunks.allocate("vol1", 1, () -> {
            throw new IllegalStateException("no groups");
        }));
        assertTrue(chunks.lookup("vol1", 1).isEmpty());
        assertEquals(List.of(), zk.getChildren().forPath(ZkPaths.chunkMap("vol1")));
    }

    @Test
    void allocatingInADeletedVolumeFailsWithoutResurrectingIt() throws Exception {
        assertTrue(new VolumeStore(zk).delete("vol1"));
        assertThrows(VolumeNotFoundException.class, () -> chunks.allocate("vol1", 0, () -> 1));
        assertNull(zk.checkExists().forPath(ZkPaths.volume("vol1")));
        assertFalse(chunks.lookup("vol1", 0).isPresent());
    }
}
