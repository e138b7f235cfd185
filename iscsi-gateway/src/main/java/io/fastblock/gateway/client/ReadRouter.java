package io.fastblock.gateway.client;

import java.util.List;

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

    /**
     * Where to resend a read that failed at the members in {@code tried}: the first member in
     * chain order (head, middle, tail) not tried yet, live ones first. Every member of a chain
     * holds every acknowledged write (the tail acknowledges last), so any of them may answer.
     * Once all were tried, round again: the chain may have been repaired meanwhile.
     */
    public Choice retry(ChunkRoute route, java.util.Set<String> tried) {
        List<Replica> members = route.members();
        int pick = -1;
        for (int i = 0; i < members.size() && pick < 0; i++) {
            if (members.get(i).live() && !tried.contains(members.get(i).id())) {
                pick = i;
            }
        }
        for (int i = 0; i < members.size() && pick < 0; i++) {
            if (!tried.contains(members.get(i).id())) {
                pick = i;
            }
        }
        if (pick < 0) {
            pick = tried.size() % members.size();
        }
        return new Choice(roleAt(pick, members.size()), members.get(pick));
    }

    private static ReplicaRole roleAt(int index, int size) {
        if (index == 0) {
            return ReplicaRole.HEAD;
        }
        return index == size - 1 ? ReplicaRole.TAIL : ReplicaRole.MIDDLE;
    }
}
