package io.fastblock.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

class VerifyPatternTest {
    static ByteBuf pattern(long off, long seed, int gen) {
        ByteBuf b = Unpooled.buffer(4096);
        VerifyPattern.fill(b, 0, 4096, off, seed, gen);
        return b;
    }

    @Test
    void exactGenerationIsRecognised() {
        ByteBuf b = pattern(8192, 5, 3);
        assertEquals(VerifyPattern.Outcome.EXACT, VerifyPattern.check(b, 0, 4096, 8192, 5, 3).outcome());
        // without an expectation (another run wrote it) the same data is intact, of some generation
        assertEquals(VerifyPattern.Outcome.OTHER_GENERATION, VerifyPattern.check(b, 0, 4096, 8192, 6, 0).outcome());
    }

    @Test
    void staleGenerationMisdirectedWriteAndCorruptionAreMismatches() {
        ByteBuf b = pattern(8192, 5, 3);
        VerifyPattern.Result stale = VerifyPattern.check(b, 0, 4096, 8192, 5, 4);
        assertEquals(VerifyPattern.Outcome.MISMATCH, stale.outcome());
        assertTrue(stale.detail().contains("generation 3"), stale.detail());
        VerifyPattern.Result misplaced = VerifyPattern.check(b, 0, 4096, 12288, 5, 0);
        assertEquals(VerifyPattern.Outcome.MISMATCH, misplaced.outcome());
        assertTrue(misplaced.detail().contains("written for offset 8192"), misplaced.detail());
        b.setByte(1000, b.getByte(1000) ^ 1);
        VerifyPattern.Result flipped = VerifyPattern.check(b, 0, 4096, 8192, 5, 3);
        assertEquals(VerifyPattern.Outcome.MISMATCH, flipped.outcome());
        assertEquals("sector at byte 8704 payload differs at byte 488 of the sector", flipped.detail());
    }

    @Test
    void zerosAreNeverWrittenUnlessAWriteWasExpected() {
        ByteBuf z = Unpooled.buffer(4096).writeZero(4096);
        assertEquals(VerifyPattern.Outcome.ZEROS, VerifyPattern.check(z, 0, 4096, 0, 1, 0).outcome());
        assertEquals(VerifyPattern.Outcome.MISMATCH, VerifyPattern.check(z, 0, 4096, 0, 1, 1).outcome());
    }
}
