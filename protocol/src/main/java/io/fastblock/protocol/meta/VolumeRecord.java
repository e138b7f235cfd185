package io.fastblock.protocol.meta;

/**
 * A volume. {@code id} is a cluster-unique number used in storage keys; {@code name} is the
 * user-facing, unique identifier (part of the IQN). Sizes are in bytes.
 *
 * <p>{@code tenant} names the owning tenant ({@link TenantRecord}); {@code qos} its limits (never
 * null once read: records written before QoS existed read back unlimited); {@code clientId} is the
 * id the creating client supplied for idempotent creation (null when none was given).
 */
public record VolumeRecord(long id, String name, long size, int blockSize, long chunkSize, String state,
                           String createdAt, String tenant, QosSpec qos, String clientId) {
    public static final String DEFAULT_TENANT = "default";

    public VolumeRecord {
        tenant = tenant == null || tenant.isEmpty() ? DEFAULT_TENANT : tenant;
        qos = qos == null ? QosSpec.UNLIMITED : qos;
    }

    public VolumeRecord(long id, String name, long size, int blockSize, long chunkSize, String state,
                        String createdAt) {
        this(id, name, size, blockSize, chunkSize, state, createdAt, DEFAULT_TENANT, QosSpec.UNLIMITED, null);
    }

    public long chunkCount() {
        return (size + chunkSize - 1) / chunkSize;
    }
}
