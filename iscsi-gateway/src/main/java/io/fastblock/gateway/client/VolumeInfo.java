package io.fastblock.gateway.client;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import io.fastblock.protocol.meta.QosSpec;
import java.util.List;

/**
 * A volume as the namenode describes it ({@code GET /v1/volumes/{name}}). {@code layers} is its
 * layer stack, bottom first (docs/snapshots.md); absent (older namenodes) means the one layer
 * {@code id}. {@code qos} its limits (absent: unlimited).
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record VolumeInfo(long id, String name, long size, int blockSize, long chunkSize, String iqn, String state,
                         String createdAt, long allocatedChunks, List<Long> layers, QosSpec qos) {
    public VolumeInfo {
        layers = layers == null || layers.isEmpty() ? List.of(id) : List.copyOf(layers);
        qos = qos == null ? QosSpec.UNLIMITED : qos;
    }

    public VolumeInfo(long id, String name, long size, int blockSize, long chunkSize, String iqn, String state,
                      String createdAt, long allocatedChunks, List<Long> layers) {
        this(id, name, size, blockSize, chunkSize, iqn, state, createdAt, allocatedChunks, layers, null);
    }

    public VolumeInfo(long id, String name, long size, int blockSize, long chunkSize, String iqn, String state,
                      String createdAt, long allocatedChunks) {
        this(id, name, size, blockSize, chunkSize, iqn, state, createdAt, allocatedChunks, null, null);
    }

    /** Number of chunks covering the volume (the last one may be partly beyond the end). */
    public long chunkCount() {
        return (size + chunkSize - 1) / chunkSize;
    }

    /** The id the volume's writes carry: its top layer. */
    public long topLayer() {
        return layers.get(layers.size() - 1);
    }
}
