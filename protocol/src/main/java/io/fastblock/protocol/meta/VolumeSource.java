package io.fastblock.protocol.meta;

/**
 * What a clone was made from: a snapshot ({@code volume} and {@code snapshot} set) or a volume
 * ({@code snapshot} null; the clone then shares an internal point-in-time view of it).
 */
public record VolumeSource(String volume, String snapshot) {
}
