package io.fastblock.namenode.placement;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fastblock.protocol.meta.GroupRecord;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Chunks go to the healthy group with the fewest chunks; the rotation breaks ties. */
class ChunkPlacementTest {
    private static final List<GroupRecord> GROUPS = List.of(new GroupRecord(1, 1, List.of("a", "b", "c")),
            new GroupRecord(2, 1, List.of("b", "c", "d")), new GroupRecord(3, 1, List.of("c", "d", "a")),
            new GroupRecord(4, 1, List.of("d", "a", "b")));

    @Test
    void evenCountsFollowTheRotation() {
        for (long chunk = 0; chunk < 8; chunk++) {
            assertEquals(ChunkPlacement.pick(GROUPS, 5, chunk).id(),
                    ChunkPlacement.pick(GROUPS, 5, chunk, Map.of(), g -> true).id());
        }
    }

    @Test
    void fillsTheEmptiestGroupFirstAndEndsBalanced() {
        Map<Integer, Long> counts = new HashMap<>(Map.of(1, 10L, 2, 3L, 3, 7L, 4, 0L));
        for (long chunk = 0; chunk < 1000; chunk++) {
            GroupRecord g = ChunkPlacement.pick(GROUPS, 2, chunk, counts, x -> true);
            counts.merge(g.id(), 1L, Long::sum);
        }
        long min = counts.values().stream().mapToLong(Long::longValue).min().orElseThrow();
        long max = counts.values().stream().mapToLong(Long::longValue).max().orElseThrow();
        assertEquals(1020, counts.values().stream().mapToLong(Long::longValue).sum());
        assertEquals(true, max - min <= 1, counts.toString());
    }

    @Test
    void unhealthyGroupsAreSkippedWhileAnyIsHealthy() {
        Map<Integer, Long> counts = Map.of(1, 5L, 2, 5L, 3, 0L, 4, 5L);
        assertEquals(1, ChunkPlacement.pick(GROUPS, 0, 0, counts, g -> g.id() != 3).id());
        // With no healthy group at all, the emptiest of them all is used rather than failing the write.
        assertEquals(3, ChunkPlacement.pick(GROUPS, 0, 0, counts, g -> false).id());
    }
}
