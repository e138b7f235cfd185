package io.fastblock.namenode.placement;

import io.fastblock.namenode.meta.ChunkMapStore;
import io.fastblock.namenode.meta.GroupStore;
import io.fastblock.namenode.meta.NodeStore;
import io.fastblock.namenode.meta.NodeStore.NodeState;
import io.fastblock.namenode.meta.VolumeStore;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.VolumeRecord;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Chooses the group of a newly allocated chunk so that chunks (and so capacity and load) spread
 * over the groups by the room they have ({@link GroupRoom}): the healthy group with the lowest
 * {@code (chunks + 1) / room}, which with equal room is the one holding the fewest chunks; ties
 * broken by {@code (volumeId + chunkIndex) mod groups} so consecutive chunks of a volume still fan
 * out. A group is healthy when it has 3 members, all live and active (not draining). A group with
 * a member under the free-space floor gets none; when every group has one, the allocation fails
 * ({@link InsufficientSpaceException}) rather than filling a disk.
 *
 * <p>Chunk counts per group are learnt once by reading every chunk map (at the first allocation
 * this namenode makes), then kept up to date in memory. Only the leader allocates, and a new leader
 * learns them afresh. A choice is counted when it is made, so allocations running at once see each
 * other's, and given back when the chunk map did not store it ({@link #chooser}): counting the
 * choices of lost races once put all 8 chunks of a fresh volume, written at once, on 2 of 3 groups.
 */
public final class ChunkPlacement {
    private final GroupStore groups;
    private final NodeStore nodes;
    private final VolumeStore volumes;
    private final ChunkMapStore chunkMaps;
    private final GroupRoom room;
    private Map<Integer, Long> counts;
    /** Bumped whenever the counts are forgotten, so a choice is given back only to the counts that hold it. */
    private long generation;

    public ChunkPlacement(GroupStore groups, NodeStore nodes) {
        this(groups, nodes, null, null);
    }

    public ChunkPlacement(GroupStore groups, NodeStore nodes, VolumeStore volumes, ChunkMapStore chunkMaps) {
        this(groups, nodes, volumes, chunkMaps, new GroupRoom(GroupRoom.DEFAULT_FREE_FLOOR));
    }

    public ChunkPlacement(GroupStore groups, NodeStore nodes, VolumeStore volumes, ChunkMapStore chunkMaps,
                          GroupRoom room) {
        this.room = room;
        this.groups = groups;
        this.nodes = nodes;
        this.volumes = volumes;
        this.chunkMaps = chunkMaps;
    }

    /** @throws NoReplicationGroupsException if no group exists yet */
    public synchronized int groupFor(long volumeId, long chunkIndex) {
        List<GroupRecord> all = groups.list();
        if (all.isEmpty()) {
            throw new NoReplicationGroupsException(nodes.liveIds().size());
        }
        if (counts == null) {
            counts = learnCounts();
        }
        Map<String, NodeState> nodeStates = nodes.all();
        GroupRecord chosen = pick(all, volumeId, chunkIndex, counts, g -> healthy(g, nodeStates),
                g -> room.of(g, nodeStates));
        counts.merge(chosen.id(), 1L, Long::sum);
        return chosen.id();
    }

    /** What {@link ChunkMapStore#allocate} asks for the group of a new chunk: this placement's choice, counted once stored. */
    public ChunkMapStore.GroupChooser chooser(long volumeId, long chunkIndex) {
        return new ChunkMapStore.GroupChooser() {
            private long countedIn = -1;

            @Override
            public int choose() {
                synchronized (ChunkPlacement.this) {
                    int group = groupFor(volumeId, chunkIndex);
                    countedIn = generation;
                    return group;
                }
            }

            @Override
            public void notStored(int group) {
                synchronized (ChunkPlacement.this) {
                    // Counts learnt afresh since the choice never held it: nothing to give back.
                    if (counts != null && countedIn == generation) {
                        counts.computeIfPresent(group, (g, n) -> n > 1 ? n - 1 : null);
                    }
                }
            }
        };
    }

    /** The chunks this placement believes each group holds (empty before its first allocation). */
    synchronized Map<Integer, Long> counts() {
        return counts == null ? Map.of() : Map.copyOf(counts);
    }

    /** Forgets the learnt counts (e.g. when leadership changes hands); the next allocation learns them again. */
    public synchronized void forgetCounts() {
        counts = null;
        generation++;
    }

    private Map<Integer, Long> learnCounts() {
        Map<Integer, Long> out = new HashMap<>();
        if (volumes == null || chunkMaps == null) {
            return out;
        }
        for (VolumeRecord v : volumes.list()) {
            chunkMaps.countByGroup(v.name(), out);
        }
        return out;
    }

    private static boolean healthy(GroupRecord g, Map<String, NodeState> nodes) {
        if (g.members().size() < GroupLayout.REPLICAS) {
            return false;
        }
        for (String m : g.members()) {
            NodeState s = nodes.get(m);
            if (s == null || !s.live() || !s.active()) {
                return false;
            }
        }
        return true;
    }

    /** The rotation alone: {@code groups[(volumeId + chunkIndex) mod groups]}. */
    static GroupRecord pick(List<GroupRecord> sortedGroups, long volumeId, long chunkIndex) {
        int slot = (int) Math.floorMod(volumeId + chunkIndex, (long) sortedGroups.size());
        return sortedGroups.get(slot);
    }

    /**
     * The healthy group with the fewest chunks (all groups when none is healthy), the first such
     * group at or after the rotation's slot.
     */
    static GroupRecord pick(List<GroupRecord> sortedGroups, long volumeId, long chunkIndex, Map<Integer, Long> counts,
                            java.util.function.Predicate<GroupRecord> healthy) {
        return pick(sortedGroups, volumeId, chunkIndex, counts, healthy, g -> 1.0);
    }

    /**
     * Among the healthy groups (all groups when none is healthy) with room, the one with the lowest
     * {@code (chunks + 1) / room}, the first such at or after the rotation's slot.
     *
     * @throws InsufficientSpaceException when none of them has room
     */
    static GroupRecord pick(List<GroupRecord> sortedGroups, long volumeId, long chunkIndex, Map<Integer, Long> counts,
                            java.util.function.Predicate<GroupRecord> healthy,
                            java.util.function.ToDoubleFunction<GroupRecord> room) {
        boolean anyHealthy = sortedGroups.stream().anyMatch(healthy);
        int n = sortedGroups.size();
        int start = (int) Math.floorMod(volumeId + chunkIndex, (long) n);
        GroupRecord best = null;
        double bestCost = Double.MAX_VALUE;
        for (int k = 0; k < n; k++) {
            GroupRecord g = sortedGroups.get((start + k) % n);
            if (anyHealthy && !healthy.test(g)) {
                continue;
            }
            double r = room.applyAsDouble(g);
            if (!(r > 0)) {
                continue;
            }
            double cost = (counts.getOrDefault(g.id(), 0L) + 1) / r;
            if (cost < bestCost) {
                bestCost = cost;
                best = g;
            }
        }
        if (best == null) {
            throw new InsufficientSpaceException("no replication group can take a new chunk: each of the "
                    + (anyHealthy ? "healthy " : "") + "groups has a storage node under its free-space floor");
        }
        return best;
    }
}
