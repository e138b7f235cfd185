package io.fastblock.storage.chain;

import io.fastblock.protocol.meta.SealedIds;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The lease-epoch floor per volume id, and the writes admitted under it. A request with an epoch
 * below the floor comes from a gateway that lost the volume's lease and is refused, so it can
 * never overwrite the new owner's data. The floor rises with the highest epoch seen in requests
 * and with explicit fences (the FENCE op and {@code /fastblock/fences/<volumeId>}, which make it
 * survive a restart); {@link #SEALED} admits no write at all, and only trims that carry the
 * epoch {@link #SEALED} themselves: the namenode's reclaimer giving a sealed layer's space back
 * (gateways never hold that epoch). Reads still pass.
 *
 * <p>{@link #fence} answers only once every write admitted for the volume before it has
 * completed: admission and fencing take the same per-volume lock, so a write either is admitted
 * before the fence (and waited for) or sees the raised floor.
 */
public final class EpochFence {
    public static final long SEALED = Long.MAX_VALUE;

    /** A write admitted under the fence; {@link #release} when it completed (acknowledged or failed). */
    public static final class Ticket {
        private final CompletableFuture<Void> done = new CompletableFuture<>();

        public void release() {
            done.complete(null);
        }
    }

    private static final class Volume {
        long floor;
        final Set<Ticket> inFlight = ConcurrentHashMap.newKeySet();
    }

    private final ConcurrentHashMap<Long, Volume> volumes = new ConcurrentHashMap<>();
    /** Ids sealed for good ({@code /fastblock/sealed-ids}): their floor starts at {@link #SEALED}. */
    private volatile SealedIds sealedIds = SealedIds.EMPTY;

    private Volume volume(long volumeId) {
        return volumes.computeIfAbsent(volumeId, v -> {
            Volume fresh = new Volume();
            if (sealedIds.contains(v)) {
                fresh.floor = SEALED;
            }
            return fresh;
        });
    }

    /**
     * Seals every id of {@code ids}, the set as last read from ZooKeeper (it only grows there): ids
     * seen before are raised now, ids seen later start sealed.
     */
    public void sealAll(SealedIds ids) {
        sealedIds = ids;
        for (var e : volumes.entrySet()) {
            if (ids.contains(e.getKey())) {
                raise(e.getKey(), SEALED);
            }
        }
    }

    /** A write: a ticket if {@code epoch} is at or above the floor (and raises the floor to it). */
    public Ticket admitWrite(long volumeId, long epoch, String nodeId) {
        return admitWrite(volumeId, epoch, nodeId, false);
    }

    /**
     * A write or ({@code trim}) a trim: a ticket if {@code epoch} is at or above the floor (and
     * raises the floor to it). A sealed volume admits only trims carrying {@link #SEALED}.
     */
    public Ticket admitWrite(long volumeId, long epoch, String nodeId, boolean trim) {
        Volume v = volume(volumeId);
        synchronized (v) {
            boolean reclaim = trim && epoch == SEALED;
            if (epoch < v.floor || (v.floor == SEALED && !reclaim)) {
                throw refusal(nodeId, volumeId, epoch, v.floor);
            }
            v.floor = epoch;
            Ticket t = new Ticket();
            v.inFlight.add(t);
            t.done.whenComplete((x, e) -> v.inFlight.remove(t));
            return t;
        }
    }

    /**
     * A forwarded copy of a write its head admitted: never refused here (refusing would leave the
     * replicas diverged; the epoch was checked at the head, whose FENCE answer waits for this
     * write to complete down the chain), but tracked, so a FENCE here waits for it too.
     */
    public Ticket admitForwarded(long volumeId, long epoch) {
        Volume v = volume(volumeId);
        synchronized (v) {
            v.floor = Math.max(v.floor, epoch);
            Ticket t = new Ticket();
            v.inFlight.add(t);
            t.done.whenComplete((x, e) -> v.inFlight.remove(t));
            return t;
        }
    }

    /** A read: refused below the floor, except that a sealed volume stays readable under any epoch. */
    public void admitRead(long volumeId, long epoch, String nodeId) {
        Volume v = volume(volumeId);
        synchronized (v) {
            if (v.floor == SEALED) {
                return;
            }
            if (epoch < v.floor) {
                throw refusal(nodeId, volumeId, epoch, v.floor);
            }
            v.floor = epoch;
        }
    }

    /** Raises the floor (never lowers it) without waiting: a floor learnt from ZooKeeper. */
    public void raise(long volumeId, long epoch) {
        Volume v = volume(volumeId);
        synchronized (v) {
            v.floor = Math.max(v.floor, epoch);
        }
    }

    /**
     * Raises the floor and completes once every write admitted for the volume before this call
     * has released its ticket.
     */
    public CompletableFuture<Void> fence(long volumeId, long epoch) {
        Volume v = volume(volumeId);
        List<CompletableFuture<Void>> before = new ArrayList<>();
        synchronized (v) {
            v.floor = Math.max(v.floor, epoch);
            for (Ticket t : v.inFlight) {
                before.add(t.done);
            }
        }
        return CompletableFuture.allOf(before.toArray(CompletableFuture[]::new));
    }

    /** The current floor (0 when none). */
    public long floor(long volumeId) {
        Volume v = volumes.get(volumeId);
        if (v == null) {
            return 0;
        }
        synchronized (v) {
            return v.floor;
        }
    }

    /** Writes admitted and not completed, for tests and operators. */
    public int inFlight(long volumeId) {
        Volume v = volumes.get(volumeId);
        return v == null ? 0 : v.inFlight.size();
    }

    static RequestRejected refusal(String nodeId, long volumeId, long epoch, long floor) {
        if (floor == SEALED) {
            return new RequestRejected(io.fastblock.protocol.Status.STALE_EPOCH, "node " + nodeId + ": volume " + volumeId
                    + " is sealed: no write or trim is admitted");
        }
        return new RequestRejected(io.fastblock.protocol.Status.STALE_EPOCH, "node " + nodeId + ": lease epoch " + epoch
                + " of volume " + volumeId + " is older than " + floor);
    }
}
