package io.fastblock.namenode.placement;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.meta.GroupRecord;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class GroupLayoutTest {
    @Test
    void fewerThanThreeNodesFormNothing() {
        assertTrue(GroupLayout.rotate(List.of()).isEmpty());
        assertTrue(GroupLayout.rotate(List.of("a", "b")).isEmpty());
    }

    @Test
    void threeNodesRotateThroughEveryRole() {
        List<GroupRecord> g = GroupLayout.rotate(List.of("storage-3", "storage-1", "storage-2"));
        assertEquals(List.of(
                new GroupRecord(1, 1, List.of("storage-1", "storage-2", "storage-3")),
                new GroupRecord(2, 1, List.of("storage-2", "storage-3", "storage-1")),
                new GroupRecord(3, 1, List.of("storage-3", "storage-1", "storage-2"))), g);
    }

    @Test
    void everyNodeHoldsEachPositionOnce() {
        List<String> nodes = List.of("n0", "n1", "n2", "n3", "n4");
        List<GroupRecord> groups = GroupLayout.rotate(nodes);
        assertEquals(5, groups.size());
        for (int position = 0; position < 3; position++) {
            Map<String, Integer> count = new HashMap<>();
            for (GroupRecord g : groups) {
                count.merge(g.members().get(position), 1, Integer::sum);
            }
            for (String n : nodes) {
                assertEquals(1, count.get(n), n + " at position " + position);
            }
        }
        assertEquals(List.of("n4", "n0", "n1"), groups.get(4).members());
    }

    @Test
    void pickRotatesByVolumeAndChunk() {
        List<GroupRecord> g = GroupLayout.rotate(List.of("a", "b", "c", "d"));
        assertEquals(1, ChunkPlacement.pick(g, 0, 0).id());
        assertEquals(3, ChunkPlacement.pick(g, 1, 1).id());
        assertEquals(1, ChunkPlacement.pick(g, 2, 2).id());
        assertEquals(4, ChunkPlacement.pick(g, 7, 4096).id());
    }
}
