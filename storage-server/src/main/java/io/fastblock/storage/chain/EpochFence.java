package io.fastblock.storage.chain;

import java.util.concurrent.ConcurrentHashMap;

/**
 * The highest lease epoch seen per volume. A request with a lower epoch comes from a gateway
 * that lost the volume's lease and is refused, so it can never overwrite the new owner's data.
 * (In memory for now: after a restart the first request re-establishes the floor.)
 */
public final class EpochFence {
    private final ConcurrentHashMap<Long, Long> highest = new ConcurrentHashMap<>();

    /** Returns the highest epoch known if {@code epoch} is stale, else records it and returns -1. */
    public long admit(long volumeId, long epoch) {
        long now = highest.merge(volumeId, epoch, Math::max);
        return epoch < now ? now : -1;
    }
}
