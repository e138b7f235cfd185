package io.fastblock.storage.chain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.Status;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class EpochFenceTest {
    private final EpochFence fence = new EpochFence();

    @Test
    void writesBelowTheFloorAreRefusedAndTheFloorNeverDrops() {
        fence.admitWrite(1, 5, "n").release();
        RequestRejected stale = assertThrows(RequestRejected.class, () -> fence.admitWrite(1, 4, "n"));
        assertEquals(Status.STALE_EPOCH, stale.status);
        assertTrue(stale.getMessage().contains("older than 5"), stale.getMessage());
        fence.raise(1, 3);
        assertEquals(5, fence.floor(1));
        fence.fence(1, 2);
        assertEquals(5, fence.floor(1));
        fence.admitWrite(2, 1, "n").release(); // other volumes are not affected
    }

    @Test
    void aSealAdmitsNoWriteOnlyTheReclaimersTrimsAndReadsStillPass() {
        fence.fence(1, EpochFence.SEALED);
        RequestRejected sealed = assertThrows(RequestRejected.class, () -> fence.admitWrite(1, Long.MAX_VALUE, "n"));
        assertTrue(sealed.getMessage().contains("sealed"), sealed.getMessage());
        assertThrows(RequestRejected.class, () -> fence.admitWrite(1, 7, "n", true));
        fence.admitWrite(1, EpochFence.SEALED, "n", true).release();
        fence.admitRead(1, 0, "n");
    }

    @Test
    void aFenceWaitsForEveryWriteAdmittedBeforeItForwardedCopiesIncluded() {
        EpochFence.Ticket head = fence.admitWrite(1, 3, "n");
        EpochFence.Ticket copy = fence.admitForwarded(1, 3);
        CompletableFuture<Void> answered = fence.fence(1, 4);
        assertFalse(answered.isDone());
        assertEquals(2, fence.inFlight(1));
        head.release();
        assertFalse(answered.isDone(), "the forwarded copy is still in flight");
        copy.release();
        assertTrue(answered.isDone());
        // After the fence: a client write below it is refused; a forwarded copy of a write its head
        // admitted earlier is still applied (refusing it would make the replicas diverge).
        assertThrows(RequestRejected.class, () -> fence.admitWrite(1, 3, "n"));
        fence.admitForwarded(1, 3).release();
        assertTrue(fence.fence(1, 4).isDone(), "nothing in flight: the answer is immediate");
    }
}
