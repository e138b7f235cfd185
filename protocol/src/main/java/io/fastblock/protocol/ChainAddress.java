package io.fastblock.protocol;

/**
 * Which replication group a data request is for, and the versions the sender believes current.
 * The receiver rejects a chain version that differs from the group's current one and a lease
 * epoch older than the newest it has seen for the volume.
 */
public record ChainAddress(int groupId, long chainVersion, long leaseEpoch) {
}
