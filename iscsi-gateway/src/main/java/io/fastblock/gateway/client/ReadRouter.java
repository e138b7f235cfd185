package io.fastblock.gateway.client;

/**
 * Default read placement of FAST: random reads go to the head (in-place layout, the random
 * readers' replica), sequential reads to the middle (in-place too, kept free of random seeks). A
 * chain without a distinct middle (2 members) or whose middle is not live sends everything to the
 * head. Stealing from a busy replica is the storage nodes' decision, not the gateway's.
 */
public final class ReadRouter {
    public record Choice(ReplicaRole role, Replica replica) {
    }

    public Choice choose(ChunkRoute route, AccessPattern pattern) {
        if (pattern == AccessPattern.SEQUENTIAL && route.members().size() >= 3) {
            Replica middle = route.members().get(1);
            if (middle.live()) {
                return new Choice(ReplicaRole.MIDDLE, middle);
            }
        }
        return new Choice(ReplicaRole.HEAD, route.head());
    }

    public Choice head(ChunkRoute route) {
        return new Choice(ReplicaRole.HEAD, route.head());
    }
}
