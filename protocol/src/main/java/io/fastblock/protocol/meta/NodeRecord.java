package io.fastblock.protocol.meta;

/** A storage server as registered in ZooKeeper; {@code id} is stable across restarts (kept in its data dir). */
public record NodeRecord(String id, String host, int port, long capacityBytes, long freeBytes) {
}
