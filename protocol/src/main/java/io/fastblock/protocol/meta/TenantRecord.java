package io.fastblock.protocol.meta;

/**
 * A tenant and its fair-share weight (PISCES): storage servers serve tenants' queues in
 * proportion to their weights. A volume whose tenant has no record has weight {@link #DEFAULT_WEIGHT}.
 */
public record TenantRecord(String name, int weight) {
    public static final int DEFAULT_WEIGHT = 100;

    public TenantRecord {
        if (weight < 1 || weight > 10_000) {
            throw new IllegalArgumentException("tenant weight must be 1..10000, got " + weight);
        }
    }
}
