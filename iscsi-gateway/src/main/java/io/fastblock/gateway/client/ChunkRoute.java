package io.fastblock.gateway.client;

import java.util.List;

/**
 * Where an allocated chunk lives: its group, the chain version, and the members in chain order.
 * It names no chunk, so all the chunks of one group at one chain version share one route
 * ({@link ChunkMapCache} keeps one per distinct value).
 */
public record ChunkRoute(int groupId, long chainVersion, List<Replica> members) {
    public ChunkRoute {
        if (members == null || members.isEmpty()) {
            throw new IllegalArgumentException("group " + groupId + " has no replicas");
        }
        members = List.copyOf(members);
    }

    public Replica head() {
        return members.get(0);
    }

    public Replica tail() {
        return members.get(members.size() - 1);
    }

    static ChunkRoute of(ChunkLocation loc) {
        GroupInfo g = loc.group();
        List<Replica> replicas = g.members().stream()
                .map(m -> new Replica(m.id(), m.address(), m.live()))
                .toList();
        if (replicas.isEmpty()) {
            throw new IllegalArgumentException("chunk " + loc.index() + " has no replicas");
        }
        return new ChunkRoute(g.id(), g.chainVersion(), replicas);
    }
}
