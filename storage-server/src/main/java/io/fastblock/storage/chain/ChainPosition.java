package io.fastblock.storage.chain;

import io.fastblock.protocol.meta.GroupRecord;

/**
 * Where a node stands in one version of a group's chain, and who it forwards writes to: the next
 * member, or, for the tail, the joining node being caught up (which sits after the tail but counts
 * for nothing until it becomes a member).
 */
record ChainPosition(Role role, boolean head, String successor) {
    enum Role {
        HEAD, MIDDLE, TAIL, JOINING, NONE;

        /** Made once: it tags every operation's meters. */
        private final String metricName = name().toLowerCase(java.util.Locale.ROOT);

        String metricName() {
            return metricName;
        }
    }

    static ChainPosition of(GroupRecord group, String nodeId) {
        int index = group.positionOf(nodeId);
        int last = group.members().size() - 1;
        if (index < 0) {
            return new ChainPosition(group.isJoining(nodeId) ? Role.JOINING : Role.NONE, false, null);
        }
        if (index == last) {
            String joining = group.joining();
            return new ChainPosition(Role.TAIL, index == 0, joining != null && !group.members().contains(joining) ? joining : null);
        }
        return new ChainPosition(index == 0 ? Role.HEAD : Role.MIDDLE, index == 0, group.members().get(index + 1));
    }

    boolean tail() {
        return role == Role.TAIL;
    }

    boolean member() {
        return role == Role.HEAD || role == Role.MIDDLE || role == Role.TAIL;
    }

    boolean joining() {
        return role == Role.JOINING;
    }

    /** Applies writes durably (log + fsync) before answering: durability follows the tail position. */
    boolean durable() {
        return tail();
    }
}
