package io.fastblock.protocol.meta;

/**
 * One layer of a volume's data: its id (drawn from the volume id sequence, so its chunk ids never
 * collide with another volume's or layer's) and the volume that created it. Its chunk map is under
 * {@link ZkPaths#layerChunkMap(long)}.
 */
public record LayerRecord(long id, String volume, long chunkSize, String createdAt) {
}
