package io.fastblock.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fastblock.protocol.TrimPlan.Piece;
import java.util.List;
import org.junit.jupiter.api.Test;

class TrimPlanTest {
    @Test
    void wholeBlocksAreTrimmedAndPartialEndsZeroWritten() {
        assertEquals(List.of(new Piece(0, 8192, true)), TrimPlan.of(0, 8192));
        assertEquals(List.of(new Piece(512, 3584, false), new Piece(4096, 4096, true), new Piece(8192, 1024, false)),
                TrimPlan.of(512, 8704));
        assertEquals(List.of(new Piece(4096, 4096, true), new Piece(8192, 512, false)), TrimPlan.of(4096, 4608));
        assertEquals(List.of(new Piece(3584, 512, false), new Piece(4096, 4096, true)), TrimPlan.of(3584, 4608));
    }

    @Test
    void rangesWithoutAWholeBlockAreOnlyZeroWritten() {
        assertEquals(List.of(new Piece(512, 1024, false)), TrimPlan.of(512, 1024));
        assertEquals(List.of(new Piece(3584, 1024, false)), TrimPlan.of(3584, 1024), "across a block edge, no whole block");
        assertEquals(List.of(), TrimPlan.of(4096, 0));
    }
}
