package io.fastblock.namenode.repair;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.namenode.meta.NodeStore.NodeState;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.NodeAdminRecord;
import io.fastblock.protocol.meta.NodeRecord;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** Repair decisions from cluster snapshots: removal, replacement choice, throttling, completion, drains. */
class RepairPlannerTest {
    /** id -> rack; every node its own host. */
    private static Map<String, NodeState> cluster(String... idRackPairs) {
        Map<String, NodeState> out = new TreeMap<>();
        for (int i = 0; i < idRackPairs.length; i += 2) {
            String id = idRackPairs[i];
            out.put(id, new NodeState(new NodeRecord(id, "127.0.0.1", 1, 1, 1,
                    Map.of(NodeRecord.LABEL_RACK, idRackPairs[i + 1], NodeRecord.LABEL_HOST, id)), true,
                    NodeAdminRecord.ACTIVE));
        }
        return out;
    }

    private static void down(Map<String, NodeState> nodes, String id) {
        NodeState s = nodes.get(id);
        nodes.put(id, new NodeState(s.record(), false, s.state()));
    }

    private static void draining(Map<String, NodeState> nodes, String id) {
        NodeState s = nodes.get(id);
        nodes.put(id, new NodeState(s.record(), s.live(), NodeAdminRecord.DRAINING));
    }

    @Test
    void aDeadNodeLeavesEveryChainAndAReplacementFromAnotherRackJoins() {
        Map<String, NodeState> nodes = cluster("a", "r1", "b", "r2", "c", "r3", "d", "r1", "e", "r2", "f", "r3");
        List<GroupRecord> groups = List.of(new GroupRecord(1, 1, List.of("a", "b", "c")),
                new GroupRecord(2, 1, List.of("b", "c", "a")), new GroupRecord(3, 1, List.of("d", "e", "f")));
        down(nodes, "a");
        RepairPlanner.Plan plan = RepairPlanner.plan(groups, nodes, Map.of(), Map.of(), 4);
        assertEquals(2, plan.changes().size(), plan.toString());
        for (RepairPlanner.Change c : plan.changes()) {
            assertEquals(2, c.after().members().size());
            assertEquals(c.before().chainVersion() + 1, c.after().chainVersion());
            // Survivors are in r2 and r3: the replacement must come from r1 (d is the only live one there).
            assertEquals("d", c.after().joining(), c.toString());
        }
        assertEquals(List.of("b", "c"), plan.changes().get(0).after().members());
        assertEquals(List.of("b", "c"), plan.changes().get(1).after().members());
        assertEquals(2, plan.departed().size());
    }

    @Test
    void joinsAreThrottledAndTheWorstGroupsGoFirst() {
        Map<String, NodeState> nodes = cluster("a", "r", "b", "r", "c", "r", "d", "r", "e", "r", "f", "r");
        List<GroupRecord> groups = List.of(new GroupRecord(1, 3, List.of("b", "c")), new GroupRecord(2, 3, List.of("d")),
                new GroupRecord(3, 3, List.of("e", "f")), new GroupRecord(4, 3, List.of("a", "b", "c"), "d"));
        RepairPlanner.Plan plan = RepairPlanner.plan(groups, nodes, Map.of(), Map.of(), 2);
        // One join runs already; one more is allowed, for the group with a single copy.
        assertEquals(1, plan.changes().size(), plan.toString());
        assertEquals(2, plan.changes().get(0).after().id());
    }

    @Test
    void aCaughtUpNodeBecomesTheTail() {
        Map<String, NodeState> nodes = cluster("a", "r1", "b", "r2", "d", "r3");
        List<GroupRecord> groups = List.of(new GroupRecord(1, 5, List.of("a", "b"), "d"));
        RepairPlanner.Plan plan = RepairPlanner.plan(groups, nodes, Map.of(1, List.of("d")), Map.of(), 2);
        assertEquals(1, plan.changes().size());
        GroupRecord after = plan.changes().get(0).after();
        assertEquals(List.of("a", "b", "d"), after.members());
        assertEquals(6, after.chainVersion());
        assertNull(after.joining());
        assertEquals("d", plan.changes().get(0).caughtUpNode());
        // A marker of some other node changes nothing.
        assertTrue(RepairPlanner.plan(groups, nodes, Map.of(1, List.of("x")), Map.of(), 2).changes().isEmpty());
    }

    @Test
    void aJoiningNodeThatDiesIsDroppedAndReplaced() {
        Map<String, NodeState> nodes = cluster("a", "r1", "b", "r2", "d", "r3", "e", "r3");
        down(nodes, "d");
        List<GroupRecord> groups = List.of(new GroupRecord(1, 5, List.of("a", "b"), "d"));
        RepairPlanner.Plan plan = RepairPlanner.plan(groups, nodes, Map.of(), Map.of(), 2);
        assertEquals(1, plan.changes().size());
        assertEquals("e", plan.changes().get(0).after().joining());
        assertEquals(5, plan.changes().get(0).after().chainVersion(), "members did not change");
    }

    @Test
    void aNodeBackSoonIsPreferredSoItCatchesUpByDelta() {
        Map<String, NodeState> nodes = cluster("a", "r1", "b", "r2", "c", "r3", "z", "r3");
        List<GroupRecord> groups = List.of(new GroupRecord(1, 2, List.of("a", "b")));
        // Without memory z and c are equal but z... c is lighter by id order; with c as returning, c wins.
        assertEquals("c", RepairPlanner.plan(groups, nodes, Map.of(), Map.of(1, "c"), 2).changes().get(0).after().joining());
        assertEquals("z", RepairPlanner.plan(groups, nodes, Map.of(), Map.of(1, "z"), 2).changes().get(0).after().joining());
    }

    @Test
    void aGroupWithNoLiveMemberIsLeftAlone() {
        Map<String, NodeState> nodes = cluster("a", "r1", "b", "r2", "c", "r3", "d", "r4");
        down(nodes, "a");
        down(nodes, "b");
        down(nodes, "c");
        RepairPlanner.Plan plan = RepairPlanner.plan(List.of(new GroupRecord(1, 1, List.of("a", "b", "c"))), nodes,
                Map.of(), Map.of(), 2);
        assertTrue(plan.changes().isEmpty(), plan.toString());
    }

    @Test
    void drainingMovesOneGroupAtATimeThenDecommissions() {
        Map<String, NodeState> nodes = cluster("a", "r1", "b", "r2", "c", "r3", "d", "r1", "e", "r2", "f", "r3");
        draining(nodes, "a");
        List<GroupRecord> groups = List.of(new GroupRecord(1, 1, List.of("a", "b", "c")),
                new GroupRecord(2, 1, List.of("b", "a", "c")), new GroupRecord(3, 1, List.of("e", "f", "d")));
        RepairPlanner.Plan first = RepairPlanner.plan(groups, nodes, Map.of(), Map.of(), 4);
        assertEquals(1, first.changes().size(), "one group at a time per draining node: " + first);
        GroupRecord joining = first.changes().get(0).after();
        assertEquals("d", joining.joining(), "the replacement keeps the drained node's rack free of survivors");
        assertEquals(List.of(), first.decommission());

        List<GroupRecord> next = List.of(joining, groups.get(1), groups.get(2));
        RepairPlanner.Plan second = RepairPlanner.plan(next, nodes, Map.of(1, List.of("d")), Map.of(), 4);
        GroupRecord done = second.changes().get(0).after();
        assertEquals(List.of("b", "c", "d"), done.members());
        assertEquals(2, done.chainVersion());
        // In the same round the next group starts its move.
        assertEquals(2, second.changes().size(), second.toString());
        assertNotEquals(null, second.changes().get(1).after().joining());

        List<GroupRecord> drained = List.of(done, new GroupRecord(2, 2, List.of("b", "c", "d")), groups.get(2));
        assertEquals(List.of("a"), RepairPlanner.plan(drained, nodes, Map.of(), Map.of(), 4).decommission());
    }

    @Test
    void noCandidateLeavesTheGroupDegraded() {
        Map<String, NodeState> nodes = cluster("a", "r1", "b", "r2", "c", "r3");
        down(nodes, "c");
        RepairPlanner.Plan plan = RepairPlanner.plan(List.of(new GroupRecord(1, 1, List.of("a", "b", "c"))), nodes,
                Map.of(), Map.of(), 2);
        assertEquals(1, plan.changes().size());
        assertEquals(List.of("a", "b"), plan.changes().get(0).after().members());
        assertNull(plan.changes().get(0).after().joining());
        Map<String, Integer> load = new HashMap<>();
        assertTrue(ReplacementChooser.choose(plan.changes().get(0).after(), nodes, load, null).isEmpty());
    }
}
