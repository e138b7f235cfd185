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
        // Each thread proposes a different group through a store of its own (as namenodes racing
        // would: one store's allocations take turns), so agreement can only come from the versioned write.
        List<Integer> results = VolumeStoreTest.race(8, i -> new ChunkMapStore(zk).allocate("vol1", 42, () -> 10 + i));
        Set<Integer> distinct = new HashSet<>(results);
        assertEquals(1, distinct.size(), "results " + results);
        int group = results.get(0);
        assertTrue(group >= 10 && group < 18);
        assertEquals(OptionalInt.of(group), chunks.lookup("vol1", 42));
    }

    @Test
    void concurrentAllocationsOfDifferentChunksInOneBucketAreAllKept() throws Exception {
        VolumeStoreTest.race(8, i -> {
            ChunkMapStore own = new ChunkMapStore(zk); // stores of their own race on the bucket's version
            for (int c = 0; c < 8; c++) {
                int chunk = i * 8 + c;
                own.allocate("vol1", chunk, () -> chunk + 1);
            }
            return null;
        });
        for (int chunk = 0; chunk < 64; chunk++) {
            assertEquals(OptionalInt.of(chunk + 1), chunks.lookup("vol1", chunk), "chunk " + chunk);
        }
        assertEquals(64, chunks.allocatedCount("vol1"));
    }

    @Test
    void allocationsOfOneBucketThroughOneStoreTakeTurns() throws Exception {
        // A gateway's first writes allocate all the chunks they touch at once, all in bucket 0.
        AtomicInteger choices = new AtomicInteger();
        AtomicInteger lost = new AtomicInteger();
        VolumeStoreTest.race(16, i -> chunks.allocate("vol1", i, new ChunkMapStore.GroupChooser() {
            @Override
            public int choose() {
                choices.incrementAndGet();
                return i + 1;
            }

            @Override
            public void notStored(int group) {
                lost.incrementAndGet();
            }
        }));
        assertEquals(16, choices.get(), "one attempt per chunk: no allocation lost a race to another of this store");
        assertEquals(0, lost.get());
        assertEquals(16, chunks.allocatedCount("vol1"));
    }

    @Test
    void aChoiceThatLostARaceIsReportedNotStored() throws Exception {
        ChunkMapStore other = new ChunkMapStore(zk); // another namenode's store, writing the same bucket
        List<Integer> chosen = new java.util.ArrayList<>();
        List<Integer> notStored = new java.util.ArrayList<>();
        int group = chunks.allocate("vol1", 3, new ChunkMapStore.GroupChooser() {
            @Override
            public int choose() {
                int g = 20 + chosen.size();
                chosen.add(g);
                if (chosen.size() == 1) {
                    other.allocate("vol1", 4, () -> 9); // lands between this attempt's read and its write
                }
                return g;
            }

            @Override
            public void notStored(int g) {
                notStored.add(g);
            }
        });
        assertEquals(List.of(20, 21), chosen);
        assertEquals(List.of(20), notStored, "the first choice was not stored, the second was");
        assertEquals(21, group);
        assertEquals(OptionalInt.of(21), chunks.lookup("vol1", 3));
        assertEquals(OptionalInt.of(9), chunks.lookup("vol1", 4));
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
