package io.fastblock.protocol.meta;

import java.util.List;

/**
 * A snapshot of a volume: the layers (bottom first) that held the volume's data when it was taken,
 * all sealed (no write admitted). {@code clientId} is the caller's optional id (idempotent create);
 * {@code size} the volume's size at that moment.
 */
public record SnapshotRecord(String name, String volume, String clientId, long size, String createdAt, String state,
                             List<Long> layers) {
    public static final String AVAILABLE = "available";

    public SnapshotRecord {
        layers = layers == null ? List.of() : List.copyOf(layers);
    }

    /** The snapshot's topmost layer: the one that was the volume's top when it was taken. */
    public long topLayer() {
        return layers.get(layers.size() - 1);
    }
}
