package io.fastblock.protocol.meta;

import java.util.List;

/**
 * A storage node whose session expired while it was a member of replication groups, written by the
 * leader namenode before it takes the node out of its chains (so a namenode that takes over keeps the
 * time, and the down/out interval does not restart on failover).
 *
 * @param id             the node
 * @param downSinceMillis wall-clock time (leader namenode's) the node was first seen down
 * @param groups         the groups it was a member of when it went down and has not yet rejoined or
 *                       been replaced in: while the interval runs they wait for it instead of
 *                       re-replicating elsewhere, and it is preferred there when it comes back
 * @param backSinceMillis when it was seen live again (0 while it is down): a later session loss
 *                       starts a new interval
 */
public record DownRecord(String id, long downSinceMillis, List<Integer> groups, long backSinceMillis) {
    public DownRecord {
        groups = groups == null ? List.of() : List.copyOf(groups);
    }

    public boolean back() {
        return backSinceMillis > 0;
    }
}
