package io.fastblock.gateway.client;

/** One member of a chunk's chain as the gateway last heard from the namenode. */
public record Replica(String id, NodeAddress address, boolean live) {
}
