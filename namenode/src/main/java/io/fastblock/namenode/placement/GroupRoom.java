package io.fastblock.namenode.placement;

import io.fastblock.namenode.meta.NodeStore.NodeState;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.NodeLoad;
import java.util.Map;

/**
 * How much room a group has for new chunks, from its members' heartbeats ({@link NodeLoad}): its
 * fullest member's free fraction above the floor, divided by {@code 1 + depth / QUEUE_SCALE} where
 * depth is its busiest member's reads and writes in flight. 0 when a member is under the floor: the
 * group takes no new chunk. A member that reports no capacity (no heartbeat yet, capacity 0) counts
 * as empty and idle: nothing is known against it.
 *
 * <p>{@link ChunkPlacement} gives the next chunk to the group with the lowest {@code (chunks + 1) / room},
 * so with equal room the group with the fewest chunks wins (even spread), and a group whose members
 * have a fifth of the room of the others settles at about a fifth of their chunks.
 */
public final class GroupRoom {
    /** Default floor: a server with less than 5% of its file system free gets no new chunk. */
    public static final double DEFAULT_FREE_FLOOR = 0.05;
    /** Requests in flight that halve a group's room. */
    static final double QUEUE_SCALE = 32;

    private final double floor;

    public GroupRoom(double floor) {
        if (!(floor >= 0 && floor < 1)) {
            throw new IllegalArgumentException("free-space floor must be in [0, 1), got " + floor);
        }
        this.floor = floor;
    }

    public double of(GroupRecord g, Map<String, NodeState> nodes) {
        double freeAbove = 1 - floor;
        int depth = 0;
        for (String m : g.members()) {
            NodeState s = nodes.get(m);
            if (s == null) {
                continue; // an unregistered member makes the group unhealthy; not a question of space
            }
            NodeLoad load = s.load();
            long capacity = load != null ? load.capacityBytes() : s.record().capacityBytes();
            if (capacity > 0) {
                double free = (double) Math.max(0, s.freeBytes()) / capacity;
                if (free < floor) {
                    return 0;
                }
                freeAbove = Math.min(freeAbove, free - floor);
            }
            if (load != null) {
                depth = Math.max(depth, load.queueDepth().getOrDefault(NodeLoad.READ, 0)
                        + load.queueDepth().getOrDefault(NodeLoad.WRITE, 0));
            }
        }
        // Exactly at the floor still takes chunks, if only a few.
        return Math.max(freeAbove, 1e-9) / (1 + depth / QUEUE_SCALE);
    }
}
