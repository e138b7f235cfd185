package io.fastblock.protocol.meta;

import com.fasterxml.jackson.annotation.JsonIgnore;
import java.util.List;

/**
 * A volume. {@code id} is a cluster-unique number used in storage keys; {@code name} is the
 * user-facing, unique identifier (part of the IQN). Sizes are in bytes.
 *
 * <p>{@code tenant} names the owning tenant ({@link TenantRecord}); {@code qos} its limits (never
 * null once read: records written before QoS existed read back unlimited); {@code clientId} is the
 * id the creating client supplied for idempotent creation (null when none was given).
 *
 * <p>{@code layers} is the volume's layer stack, bottom first (see docs/snapshots.md): writes go to
 * the top layer, reads fall through from the top to the first layer holding the block. Null for a
 * volume never snapshotted nor cloned: its only layer is {@code id} and that layer's chunk map still
 * lives under the volume's znode ({@link ZkPaths#chunkMap}). {@code source} says what a clone was
 * made from (null for a volume created empty).
 */
public record VolumeRecord(long id, String name, long size, int blockSize, long chunkSize, String state,
                           String createdAt, String tenant, QosSpec qos, String clientId, List<Long> layers,
                           VolumeSource source) {
    public static final String DEFAULT_TENANT = "default";

    public VolumeRecord {
        tenant = tenant == null || tenant.isEmpty() ? DEFAULT_TENANT : tenant;
        qos = qos == null ? QosSpec.UNLIMITED : qos;
        layers = layers == null || layers.isEmpty() ? null : List.copyOf(layers);
    }

    public VolumeRecord(long id, String name, long size, int blockSize, long chunkSize, String state,
                        String createdAt, String tenant, QosSpec qos, String clientId) {
        this(id, name, size, blockSize, chunkSize, state, createdAt, tenant, qos, clientId, null, null);
    }

    public VolumeRecord(long id, String name, long size, int blockSize, long chunkSize, String state,
                        String createdAt) {
        this(id, name, size, blockSize, chunkSize, state, createdAt, DEFAULT_TENANT, QosSpec.UNLIMITED, null);
    }

    public long chunkCount() {
        return (size + chunkSize - 1) / chunkSize;
    }

    /** The id the volume's writes carry ({@code ChunkId.volumeId}, lease fencing): its top layer. */
    public long topLayer() {
        return layers == null ? id : layers.get(layers.size() - 1);
    }

    /** The layer stack, bottom first; {@code [id]} for a volume never snapshotted nor cloned. */
    @JsonIgnore
    public List<Long> layerStack() {
        return layers == null ? List.of(id) : layers;
    }

    /** Whether the volume's chunk maps live under {@code /fastblock/layers} (false: its one map is under the volume). */
    @JsonIgnore
    public boolean layered() {
        return layers != null;
    }

    public VolumeRecord withLayers(List<Long> newLayers) {
        return new VolumeRecord(id, name, size, blockSize, chunkSize, state, createdAt, tenant, qos, clientId,
                newLayers, source);
    }

    public VolumeRecord withName(String newName) {
        return new VolumeRecord(id, newName, size, blockSize, chunkSize, state, createdAt, tenant, qos, clientId,
                layers, source);
    }

    public VolumeRecord withQos(QosSpec newQos) {
        return new VolumeRecord(id, name, size, blockSize, chunkSize, state, createdAt, tenant, newQos, clientId,
                layers, source);
    }

    public VolumeRecord withSize(long newSize) {
        return new VolumeRecord(id, name, newSize, blockSize, chunkSize, state, createdAt, tenant, qos, clientId,
                layers, source);
    }
}
