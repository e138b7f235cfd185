package io.fastblock.protocol;

/** A chunk of a volume: the unit of placement and replication. */
public record ChunkId(long volumeId, long index) {
    public ChunkId {
        if (volumeId < 0 || index < 0) {
            throw new IllegalArgumentException("negative chunk id " + volumeId + "/" + index);
        }
    }

    @Override
    public String toString() {
        return volumeId + "/" + index;
    }
}
