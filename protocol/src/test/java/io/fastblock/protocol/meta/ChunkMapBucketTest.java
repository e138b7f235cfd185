package io.fastblock.protocol.meta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class ChunkMapBucketTest {
    @Test
    void assignmentsSurviveEncoding() {
        ChunkMapBucket b = ChunkMapBucket.empty();
        b.assign(ChunkMapBucket.CHUNKS_PER_BUCKET + 5, 3);
        ChunkMapBucket back = ChunkMapBucket.decode(b.encode());
        assertEquals(3, back.groupOf(5));
        assertEquals(ChunkMapBucket.UNALLOCATED, back.groupOf(6));
        assertEquals(1, back.allocatedCount());
        assertEquals(1, ChunkMapBucket.bucketOf(ChunkMapBucket.CHUNKS_PER_BUCKET + 5));
    }

    @Test
    void rejectsWrongSize() {
        assertThrows(IllegalArgumentException.class, () -> ChunkMapBucket.decode(new byte[7]));
    }
}
