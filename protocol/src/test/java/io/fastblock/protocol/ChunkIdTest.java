package io.fastblock.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** ChunkId's hand-written equals and hashCode keep a record's contract. */
class ChunkIdTest {
    @Test
    void equalIdsAreEqualAndHashAlike() {
        ChunkId a = new ChunkId(7, 3);
        ChunkId b = new ChunkId(7, 3);
        assertEquals(a, b);
        assertEquals(a.hashCode(), b.hashCode());
        assertNotEquals(a, new ChunkId(3, 7));
        assertNotEquals(a, new ChunkId(7, 4));
        assertNotEquals(a, new ChunkId(8, 3));
        assertNotEquals(a, null);
        assertNotEquals(a, "7/3");
        assertEquals("7/3", a.toString());
    }

    @Test
    void idsOfOneVolumeSpreadOverHashes() {
        Set<Integer> hashes = new HashSet<>();
        for (long volume = 0; volume < 32; volume++) {
            for (long index = 0; index < 1024; index++) {
                hashes.add(new ChunkId(volume, index).hashCode());
            }
        }
        // Distinct chunks of nearby volumes must not pile onto a few hash values.
        assertEquals(32 * 1024, hashes.size(), "hash collisions among nearby chunk ids");
    }

    @Test
    void negativeIdsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> new ChunkId(-1, 0));
        assertThrows(IllegalArgumentException.class, () -> new ChunkId(0, -1));
    }
}
