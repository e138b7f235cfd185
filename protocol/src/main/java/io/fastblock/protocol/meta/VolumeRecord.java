package io.fastblock.protocol.meta;

/**
 * A volume. {@code id} is a cluster-unique number used in storage keys; {@code name} is the
 * user-facing, unique identifier (part of the IQN). Sizes are in bytes.
 */
public record VolumeRecord(long id, String name, long size, int blockSize, long chunkSize, String state,
                           String createdAt) {
    public long chunkCount() {
        return (size + chunkSize - 1) / chunkSize;
    }
}
