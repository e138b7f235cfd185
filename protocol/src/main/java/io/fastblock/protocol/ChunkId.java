package io.fastblock.protocol;

/** A chunk of a volume: the unit of placement and replication. */
public record ChunkId(long volumeId, long index) {
    public ChunkId {
        if (volumeId < 0 || index < 0) {
            throw new IllegalArgumentException("negative chunk id " + volumeId + "/" + index);
        }
    }

    // Written out: a record's generated equals and hashCode go through invokedynamic method
    // handles, which showed up in the storage servers' write path profile (every chunk map lookup).
    @Override
    public boolean equals(Object o) {
        return o instanceof ChunkId c && c.volumeId == volumeId && c.index == index;
    }

    @Override
    public int hashCode() {
        // A volume's chunks sit in consecutive indexes: multiply the volume id out of their way.
        return Long.hashCode(volumeId * 0x9E3779B97F4A7C15L + index);
    }

    @Override
    public String toString() {
        return volumeId + "/" + index;
    }
}
