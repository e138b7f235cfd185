package io.fastblock.gateway.client;

import java.util.List;

/** Where an allocated chunk lives: its group, the chain version, and the members in chain order. */
public record ChunkRoute(long index, int groupId, long chainVersion, List<Replica> members) {
    public ChunkRoute {
        if (members == null || members.isEmpty()) {
            throw new IllegalArgumentException("chunk " + index + " has no replicas");
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
        return new ChunkRoute(loc.index(), g.id(), g.chainVersion(), replicas);
    }
}
