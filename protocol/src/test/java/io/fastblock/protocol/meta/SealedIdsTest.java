package io.fastblock.protocol.meta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class SealedIdsTest {
    private static SealedIds parse(String s) {
        return SealedIds.parse(s.getBytes(StandardCharsets.US_ASCII));
    }

    @Test
    void addingMergesNeighbours() {
        SealedIds s = SealedIds.EMPTY.with(5).with(7).with(3);
        assertEquals("3,5,7", s.toString());
        s = s.with(6).with(4);
        assertEquals("3-7", s.toString());
        assertEquals(1, s.ranges());
        assertEquals(s, parse("3-7"));
        assertTrue(s.contains(3) && s.contains(7));
        assertFalse(s.contains(2) || s.contains(8));
    }

    @Test
    void matchesASetOfRandomIds() {
        Random rnd = new Random(42);
        TreeSet<Long> ids = new TreeSet<>();
        SealedIds s = SealedIds.EMPTY;
        for (int i = 0; i < 2000; i++) {
            long id = rnd.nextInt(3000);
            ids.add(id);
            s = s.with(id);
        }
        for (long id = 0; id < 3100; id++) {
            assertEquals(ids.contains(id), s.contains(id), "id " + id);
        }
        assertEquals(s, SealedIds.parse(s.encode()));
    }

    @Test
    void badTextIsAPreciseError() {
        assertEquals(SealedIds.EMPTY, SealedIds.parse(new byte[0]));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> parse("1-3,x"));
        assertTrue(e.getMessage().contains("\"x\""), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> parse("5-2"));
        assertThrows(IllegalArgumentException.class, () -> parse("4,1"));
        assertThrows(IllegalArgumentException.class, () -> parse("-1"));
        assertThrows(IllegalArgumentException.class, () -> SealedIds.EMPTY.with(-1));
    }
}
