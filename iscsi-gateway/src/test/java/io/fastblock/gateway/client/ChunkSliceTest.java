package io.fastblock.gateway.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

class ChunkSliceTest {
    private static final long MIB = 1 << 20;

    @Test
    void requestInsideOneChunk() {
        assertEquals(List.of(new ChunkSlice(3, 4096, 8192, 0)),
                ChunkSlice.split(3 * MIB + 4096, 8192, MIB, Integer.MAX_VALUE));
    }

    @Test
    void requestEndingExactlyAtABoundaryStaysInOneChunk() {
        assertEquals(List.of(new ChunkSlice(0, MIB - 4096, 4096, 0)),
                ChunkSlice.split(MIB - 4096, 4096, MIB, Integer.MAX_VALUE));
    }

    @Test
    void unalignedStartSpanningTwoChunks() {
        assertEquals(List.of(new ChunkSlice(0, MIB - 512, 512, 0), new ChunkSlice(1, 0, 3584, 512)),
                ChunkSlice.split(MIB - 512, 4096, MIB, Integer.MAX_VALUE));
    }

    @Test
    void requestSpanningThreeChunks() {
        int length = (int) (2 * MIB);
        List<ChunkSlice> slices = ChunkSlice.split(5 * MIB - 1024, length, MIB, Integer.MAX_VALUE);
        assertEquals(List.of(
                new ChunkSlice(4, MIB - 1024, 1024, 0),
                new ChunkSlice(5, 0, (int) MIB, 1024),
                new ChunkSlice(6, 0, (int) MIB - 1024, 1024 + (int) MIB)), slices);
        assertEquals(length, slices.stream().mapToInt(ChunkSlice::length).sum());
    }

    @Test
    void piecesAreCappedAtTheLargestRequest() {
        assertEquals(List.of(new ChunkSlice(0, 0, 4096, 0), new ChunkSlice(0, 4096, 4096, 4096),
                        new ChunkSlice(0, 8192, 1024, 8192)),
                ChunkSlice.split(0, 9216, MIB, 4096));
    }

    @Test
    void emptyRequestHasNoSlices() {
        assertEquals(List.of(), ChunkSlice.split(MIB, 0, MIB, 4096));
    }

    @Test
    void rejectsNegativeValues() {
        assertThrows(IllegalArgumentException.class, () -> ChunkSlice.split(-1, 1, MIB, 1));
        assertThrows(IllegalArgumentException.class, () -> ChunkSlice.split(0, -1, MIB, 1));
        assertThrows(IllegalArgumentException.class, () -> ChunkSlice.split(0, 1, 0, 1));
    }
}
