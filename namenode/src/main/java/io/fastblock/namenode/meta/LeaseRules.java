package io.fastblock.namenode.meta;

import io.fastblock.protocol.meta.LeaseRecord;

/** The lease decision as a pure function of the current lease and the request. */
public final class LeaseRules {
    /** The first epoch a volume's lease gets; 0 stays "no lease" on the wire. */
    public static final long FIRST_EPOCH = 1;

    private LeaseRules() {
    }

    /**
     * The lease after {@code gateway} asks for it: see {@link LeaseStore#acquire}.
     *
     * @throws LeaseLostException for a renewal ({@code renewEpoch} non-null) by a gateway that no longer
     *                            holds the lease with that epoch
     */
    public static LeaseRecord next(LeaseRecord current, long volumeId, String volume, String gateway, long ttlMillis,
                                   long nowMillis, Long renewEpoch) {
        long expires = nowMillis + ttlMillis;
        boolean held = current != null && current.holder().equals(gateway);
        if (renewEpoch != null) {
            if (!held || current.epoch() != renewEpoch) {
                throw new LeaseLostException(volume, gateway, renewEpoch, current);
            }
            return new LeaseRecord(volumeId, volume, gateway, current.epoch(), expires);
        }
        if (current == null) {
            return new LeaseRecord(volumeId, volume, gateway, FIRST_EPOCH, expires);
        }
        if (held) {
            return new LeaseRecord(volumeId, volume, gateway, current.epoch(), expires);
        }
        return new LeaseRecord(volumeId, volume, gateway, current.epoch() + 1, expires);
    }
}
