package io.fastblock.namenode.capacity;

/**
 * Honest capacity figures, bytes. {@code raw}: what the storage nodes report (decommissioned ones
 * left out); {@code usable}: raw / 3, since every byte is stored three times; {@code provisioned}:
 * the sum of volume sizes (thin: promised, not used); {@code allocated}: bytes of chunks that have
 * a replication group (the most the volumes can occupy today, before replication);
 * {@code provisionable}: usable x over-subscription ratio, the ceiling for provisioned (0 = no limit).
 */
public record Capacity(long raw, long usable, long provisioned, long allocated, double oversubscription,
                       long provisionable) {
    public static final int REPLICAS = 3;

    public static Capacity of(long raw, long provisioned, long allocated, double oversubscription) {
        long usable = raw / REPLICAS;
        long ceiling = oversubscription <= 0 ? 0 : saturatedMultiply(usable, oversubscription);
        return new Capacity(raw, usable, provisioned, allocated, oversubscription, ceiling);
    }

    /** Whether another {@code size} bytes may be provisioned under the ratio. */
    public boolean admits(long size) {
        if (oversubscription <= 0) {
            return true;
        }
        return provisioned + size <= provisionable && provisioned + size >= 0;
    }

    /** @throws InsufficientCapacityException unless another {@code size} bytes may be provisioned */
    public void require(long size) {
        if (!admits(size)) {
            throw new InsufficientCapacityException("another " + size + " bytes would bring provisioned capacity to "
                    + (provisioned + size) + " bytes, over the limit of " + provisionable + " (usable " + usable
                    + " bytes x over-subscription " + oversubscription + ")");
        }
    }

    private static long saturatedMultiply(long bytes, double ratio) {
        double v = bytes * ratio;
        return v >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) v;
    }
}
