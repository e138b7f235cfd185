package io.fastblock.gateway.scsi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class LbaRangeLocksTest {
    @Test
    void tryLockTakesFreeRangesAndRefusesOverlapsWithHeldOrWaitingOnes() {
        LbaRangeLocks locks = new LbaRangeLocks();
        LbaRangeLocks.Held a = locks.tryLock(0, 8);
        assertNotNull(a);
        assertNotNull(locks.tryLock(8, 8), "adjacent, not overlapping");
        assertNull(locks.tryLock(7, 1), "overlaps a held range");
        CompletableFuture<LbaRangeLocks.Held> queued = locks.lock(4, 1);
        assertFalse(queued.isDone());
        a.release();
        assertTrue(queued.isDone(), "the waiter is granted when the range goes");
        // A waiter keeps its turn: a later tryLock overlapping it is refused even where nothing is held.
        LbaRangeLocks.Held b = locks.tryLock(100, 10);
        CompletableFuture<LbaRangeLocks.Held> waiter = locks.lock(105, 10);
        assertNull(locks.tryLock(112, 1), "overlaps the waiter only");
        b.release();
        waiter.join().release();
        queued.join().release();
        assertEquals(1, locks.heldCount(), "only [8, 16) is still held");
    }

    @Test
    void aRangeReleasedTwiceIsABug() {
        LbaRangeLocks locks = new LbaRangeLocks();
        LbaRangeLocks.Held h = locks.tryLock(0, 1);
        h.release();
        assertThrows(IllegalStateException.class, h::release);
        assertEquals(0, locks.heldCount());
    }
}
