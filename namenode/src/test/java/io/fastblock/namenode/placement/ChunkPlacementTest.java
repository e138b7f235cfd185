package io.fastblock.namenode.placement;

import static org.junit.jupiter.api.Assertions.assertEquals;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.namenode.meta.NodeStore.NodeState;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.NodeLoad;
import io.fastblock.protocol.meta.NodeRecord;
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

    private static final long GIB = 1L << 30;
    private static final List<GroupRecord> TWO = List.of(new GroupRecord(1, 1, List.of("a", "b", "c")),
            new GroupRecord(2, 1, List.of("d", "e", "f")));

    /** Six live nodes of 100 GiB, each {@code free} GiB free unless given, no requests in flight unless given. */
    private static Map<String, NodeState> nodes(Map<String, Long> freeGib, Map<String, Integer> inFlight) {
        Map<String, NodeState> out = new HashMap<>();
        for (String id : List.of("a", "b", "c", "d", "e", "f")) {
            NodeLoad load = new NodeLoad(100 * GIB, freeGib.getOrDefault(id, 60L) * GIB,
                    Map.of(NodeLoad.WRITE, inFlight.getOrDefault(id, 0)), 0);
            out.put(id, new NodeState(new NodeRecord(id, "127.0.0.1", 1, 100 * GIB, 100 * GIB), true, "active", load));
        }
        return out;
    }

    /** Places {@code chunks} chunks on {@link #TWO} with {@code room}; the count per group. */
    private static Map<Integer, Long> place(int chunks, Map<String, NodeState> nodes) {
        GroupRoom room = new GroupRoom(GroupRoom.DEFAULT_FREE_FLOOR);
        Map<Integer, Long> counts = new HashMap<>();
        for (long chunk = 0; chunk < chunks; chunk++) {
            GroupRecord g = ChunkPlacement.pick(TWO, 9, chunk, counts, x -> true, x -> room.of(x, nodes));
            counts.merge(g.id(), 1L, Long::sum);
        }
        return counts;
    }

    @Test
    void equalRoomSpreadsEvenly() {
        Map<Integer, Long> counts = place(1000, nodes(Map.of(), Map.of()));
        assertEquals(500L, counts.get(1));
        assertEquals(500L, counts.get(2));
    }

    @Test
    void aNearlyFullServerGetsFewerNewChunks() {
        // f has 10 GiB free (5 above the floor) against 60 (55 above) for the others: about 1 in 12.
        Map<Integer, Long> counts = place(1200, nodes(Map.of("f", 10L), Map.of()));
        long withF = counts.getOrDefault(2, 0L);
        assertTrue(withF >= 80 && withF <= 120, "group with f got " + withF + " of 1200: " + counts);
    }

    @Test
    void aServerUnderTheFloorGetsNone() {
        Map<Integer, Long> counts = place(300, nodes(Map.of("e", 4L), Map.of()));
        assertEquals(null, counts.get(2), counts.toString());
        assertEquals(300L, counts.get(1));
    }

    @Test
    void aBusyServerGetsFewerNewChunks() {
        // b has 64 requests in flight: its group's room is a third.
        Map<Integer, Long> counts = place(1200, nodes(Map.of(), Map.of("b", 64)));
        assertEquals(300L, counts.get(1), counts.toString());
        assertEquals(900L, counts.get(2), counts.toString());
    }

    @Test
    void everyGroupUnderTheFloorIsAPreciseError() {
        Map<String, NodeState> full = nodes(Map.of("a", 1L, "d", 2L), Map.of());
        InsufficientSpaceException e = assertThrows(InsufficientSpaceException.class, () -> place(1, full));
        assertTrue(e.getMessage().contains("free-space floor"), e.getMessage());
    }

    @Test
    void serversWithoutFiguresCountAsEmpty() {
        Map<String, NodeState> unknown = new HashMap<>();
        for (String id : List.of("a", "b", "c", "d", "e", "f")) {
            unknown.put(id, new NodeState(new NodeRecord(id, "127.0.0.1", 1, 0, 0), true));
        }
        Map<Integer, Long> counts = place(100, unknown);
        assertEquals(50L, counts.get(1));
        assertEquals(50L, counts.get(2));
    }
}
