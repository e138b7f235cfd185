package io.fastblock.protocol.meta;

import java.util.List;

/**
 * A replication group: {@code members} in chain order (head first, tail last). Any change of
 * membership or order bumps {@code chainVersion}.
 *
 * <p>{@code joining} names a node being caught up (null when none): it receives every write
 * after the tail has made it durable (the tail forwards to it and waits for its ack before
 * answering upstream), while it copies the older data from the tail in the background. It
 * serves no reads and counts for no durability until the namenode makes it a member, which
 * bumps the chain version. A storage server announces that it has caught up by creating
 * {@link ZkPaths#caughtUp(int, String)}.
 */
public record GroupRecord(int id, long chainVersion, List<String> members, String joining) {
    public GroupRecord {
        members = List.copyOf(members);
    }

    public GroupRecord(int id, long chainVersion, List<String> members) {
        this(id, chainVersion, members, null);
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

    public boolean isJoining(String nodeId) {
        return nodeId != null && nodeId.equals(joining);
    }
}
