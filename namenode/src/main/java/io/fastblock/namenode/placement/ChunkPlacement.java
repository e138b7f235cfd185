package io.fastblock.namenode.placement;

import io.fastblock.namenode.meta.GroupStore;
import io.fastblock.namenode.meta.NodeStore;
import io.fastblock.protocol.meta.GroupRecord;
import java.util.List;

/**
 * Chooses the group of a newly allocated chunk: {@code groups[(volumeId + chunkIndex) % groups]}
 * with groups sorted by id. Consecutive chunks of a volume land on consecutive groups, and
 * different volumes start at different groups, so load spreads without any stored state.
 */
public final class ChunkPlacement {
    private final GroupStore groups;
    private final NodeStore nodes;

    public ChunkPlacement(GroupStore groups, NodeStore nodes) {
        this.groups = groups;
        this.nodes = nodes;
    }

    /** @throws NoReplicationGroupsException if no group exists yet */
    public int groupFor(long volumeId, long chunkIndex) {
        List<GroupRecord> all = groups.list();
        if (all.isEmpty()) {
            throw new NoReplicationGroupsException(nodes.liveIds().size());
        }
        return pick(all, volumeId, chunkIndex).id();
    }

    static GroupRecord pick(List<GroupRecord> sortedGroups, long volumeId, long chunkIndex) {
        int slot = (int) Math.floorMod(volumeId + chunkIndex, (long) sortedGroups.size());
        return sortedGroups.get(slot);
    }
}
