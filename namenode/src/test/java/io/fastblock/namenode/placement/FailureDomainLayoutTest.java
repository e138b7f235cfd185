package io.fastblock.namenode.placement;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.NodeRecord;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** Group formation across failure domains, with roles spread evenly, for many cluster shapes. */
class FailureDomainLayoutTest {
    private static NodeRecord node(String id, String host, String rack) {
        Map<String, String> labels = new HashMap<>();
        if (host != null) {
            labels.put(NodeRecord.LABEL_HOST, host);
        }
        if (rack != null) {
            labels.put(NodeRecord.LABEL_RACK, rack);
        }
        return new NodeRecord(id, "127.0.0.1", 0, 1, 1, labels);
    }

    /** nodesPerRack[r] nodes in rack r, each on its own host. */
    private static List<NodeRecord> racks(int... nodesPerRack) {
        List<NodeRecord> out = new ArrayList<>();
        int n = 0;
        for (int r = 0; r < nodesPerRack.length; r++) {
            for (int i = 0; i < nodesPerRack[r]; i++) {
                out.add(node("s" + (n++), "h" + n, "r" + r));
            }
        }
        return out;
    }

    private static void assertRolesEven(List<NodeRecord> nodes, List<GroupRecord> groups) {
        assertEquals(nodes.size(), groups.size());
        for (int position = 0; position < 3; position++) {
            Map<String, Integer> count = new HashMap<>();
            for (GroupRecord g : groups) {
                assertEquals(3, new HashSet<>(g.members()).size(), "a node twice in " + g);
                count.merge(g.members().get(position), 1, Integer::sum);
            }
            for (NodeRecord n : nodes) {
                assertEquals(1, count.getOrDefault(n.id(), 0), n.id() + " at position " + position);
            }
        }
    }

    private static long spanning(List<NodeRecord> nodes, List<GroupRecord> groups, Function<NodeRecord, String> domain) {
        Map<String, NodeRecord> byId = new HashMap<>();
        nodes.forEach(n -> byId.put(n.id(), n));
        return groups.stream().filter(g -> {
            Set<String> d = new HashSet<>();
            g.members().forEach(m -> d.add(domain.apply(byId.get(m))));
            return d.size() == 3;
        }).count();
    }

    @Test
    void racksOfAtMostAThirdOfTheNodesPutEveryGroupInThreeRacks() {
        // A rack of r nodes fills 3r chain slots, at most one per group: with k groups, 3r <= k is needed.
        for (int[] shape : new int[][] {{1, 1, 1}, {2, 2, 2}, {3, 3, 3}, {2, 2, 2, 2}, {1, 1, 1, 1, 1}, {4, 4, 4, 4},
            {3, 3, 2, 2}, {2, 2, 1, 1}, {5, 5, 5}, {3, 3, 3, 1}, {2, 1, 1, 1, 1}}) {
            List<NodeRecord> nodes = racks(shape);
            List<GroupRecord> groups = GroupLayout.form(nodes);
            assertRolesEven(nodes, groups);
            assertEquals(groups.size(), spanning(nodes, groups, NodeRecord::rackDomain),
                    "shape " + java.util.Arrays.toString(shape) + ": " + groups);
        }
    }

    @Test
    void unevenRacksStillPutEveryGroupInThreeRacks() {
        // {2, 2, 1}: one group per node cannot (a rack of 2 would need 6 of the 5 groups); triples of
        // three racks rotated through the roles can: 15 groups, every node equally head, middle and tail.
        List<NodeRecord> nodes = racks(2, 2, 1);
        List<GroupRecord> groups = GroupLayout.form(nodes);
        assertEquals(15, groups.size());
        assertEquals(15, spanning(nodes, groups, NodeRecord::rackDomain));
        for (NodeRecord n : nodes) {
            int[] roles = new int[3];
            groups.forEach(g -> {
                int at = g.members().indexOf(n.id());
                if (at >= 0) {
                    roles[at]++;
                }
            });
            assertEquals(roles[0], roles[1], n.id() + " " + java.util.Arrays.toString(roles));
            assertEquals(roles[1], roles[2], n.id() + " " + java.util.Arrays.toString(roles));
        }
    }

    @Test
    void unlabelledNodesKeepTheSortedRotation() {
        List<GroupRecord> g = GroupLayout.rotate(List.of("n3", "n1", "n0", "n2"));
        assertEquals(List.of("n0", "n1", "n2"), g.get(0).members());
        assertEquals(List.of("n3", "n0", "n1"), g.get(3).members());
    }

    @Test
    void hostsCountWhenThereAreNoRacks() {
        // 6 nodes on 3 hosts, 2 each: every group spans the 3 hosts.
        List<NodeRecord> nodes = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            nodes.add(node("s" + i, "host" + (i % 3), null));
        }
        List<GroupRecord> groups = GroupLayout.form(nodes);
        assertRolesEven(nodes, groups);
        assertEquals(6, spanning(nodes, groups, NodeRecord::hostDomain));
    }

    @Test
    void racksFirstThenHostsInsideThem() {
        // 2 racks only: no group can span 3 racks, but each spans 2 racks and 3 hosts.
        List<NodeRecord> nodes = List.of(node("a", "h1", "r1"), node("b", "h2", "r1"), node("c", "h3", "r1"),
                node("d", "h4", "r2"), node("e", "h5", "r2"), node("f", "h6", "r2"));
        List<GroupRecord> groups = GroupLayout.form(nodes);
        assertRolesEven(nodes, groups);
        assertEquals(6, spanning(nodes, groups, NodeRecord::hostDomain));
        Map<String, String> rack = new HashMap<>();
        nodes.forEach(n -> rack.put(n.id(), n.rackDomain()));
        for (GroupRecord g : groups) {
            assertEquals(2, g.members().stream().map(rack::get).distinct().count(), g.toString());
        }
    }

    @Test
    void aDominantRackIsInEveryGroupOnce() {
        // 4 of 6 nodes in one rack: every group has one of them and the two lone racks' nodes.
        List<NodeRecord> nodes = racks(4, 1, 1);
        List<GroupRecord> groups = GroupLayout.form(nodes);
        assertEquals(groups.size(), spanning(nodes, groups, NodeRecord::rackDomain));
    }
}
