package io.fastblock.protocol.meta;

import java.util.List;

/**
 * A replication group: {@code members} in chain order (head first, tail last). Any change of
 * membership or order bumps {@code chainVersion}.
 */
public record GroupRecord(int id, long chainVersion, List<String> members) {
    public GroupRecord {
        members = List.copyOf(members);
    }

    public String head() {
        return members.get(0);
    }

    public String tail() {
        return members.get(members.size() - 1);
    }

    /** The position of {@code nodeId} in the chain, or -1. */
    public int positionOf(String nodeId) {
        return members.indexOf(nodeId);
    }
}
