package io.fastblock.storage.chain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.fastblock.protocol.ChunkId;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class AppliedWindowTest {
    private static final ChunkId A = new ChunkId(7, 0);
    private static final ChunkId B = new ChunkId(7, 1);

    @Test
    void findsWhatItRecordedByChunkAndSequence() {
        AppliedWindow w = new AppliedWindow(16);
        CompletableFuture<Void> a5 = new CompletableFuture<>();
        CompletableFuture<Void> b5 = new CompletableFuture<>();
        w.put(A, 5, a5);
        w.put(B, 5, b5);
        assertSame(a5, w.get(A, 5));
        assertSame(b5, w.get(B, 5));
        assertNull(w.get(A, 4), "a sequence below the highest that was never recorded");
        assertNull(w.get(A, 6), "a sequence above every recorded one");
        assertNull(w.get(new ChunkId(8, 0), 5), "same sequence, another volume");
    }

    @Test
    void findsAResendThatArrivesAfterNewerWrites() {
        AppliedWindow w = new AppliedWindow(16);
        List<CompletableFuture<Void>> f = new ArrayList<>();
        for (int s = 10; s < 20; s++) {
            f.add(new CompletableFuture<>());
            w.put(A, s, f.get(s - 10));
        }
        // After a chain change a new predecessor resends from its sent list: older sequences, some not yet here.
        CompletableFuture<Void> late = new CompletableFuture<>();
        w.put(B, 3, late);
        assertSame(late, w.get(B, 3));
        assertSame(f.get(0), w.get(A, 10));
        assertSame(f.get(9), w.get(A, 19));
    }

    @Test
    void keepsOnlyTheNewestCapacityEntriesAcrossGrowthAndWrapping() {
        int capacity = 200; // not a multiple of the ring's first size: it grows 64, 128, 200
        AppliedWindow w = new AppliedWindow(capacity);
        List<CompletableFuture<Void>> f = new ArrayList<>();
        for (int s = 0; s < 1000; s++) {
            f.add(new CompletableFuture<>());
            w.put(s % 2 == 0 ? A : B, s, f.get(s));
            if (s == 150) {
                // Grown twice, never wrapped: everything recorded is still there.
                for (int t = 0; t <= 150; t++) {
                    assertSame(f.get(t), w.get(t % 2 == 0 ? A : B, t), "sequence " + t + " after growing");
                }
            }
        }
        assertEquals(capacity, w.size());
        for (int s = 0; s < 800; s++) {
            assertNull(w.get(s % 2 == 0 ? A : B, s), "sequence " + s + " fell out of the window");
        }
        for (int s = 800; s < 1000; s++) {
            assertSame(f.get(s), w.get(s % 2 == 0 ? A : B, s), "sequence " + s + " is among the newest " + capacity);
        }
    }

    @Test
    void aWindowSmallerThanTheFirstRingHoldsOnlyItsCapacity() {
        AppliedWindow w = new AppliedWindow(3);
        List<CompletableFuture<Void>> f = new ArrayList<>();
        for (int s = 1; s <= 5; s++) {
            f.add(new CompletableFuture<>());
            w.put(A, s, f.get(s - 1));
        }
        assertEquals(3, w.size());
        assertNull(w.get(A, 1));
        assertNull(w.get(A, 2));
        for (int s = 3; s <= 5; s++) {
            assertSame(f.get(s - 1), w.get(A, s));
        }
    }

    @Test
    void refusesANonPositiveCapacity() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new AppliedWindow(0));
        assertEquals("applied window capacity must be positive, got 0", e.getMessage());
    }
}
