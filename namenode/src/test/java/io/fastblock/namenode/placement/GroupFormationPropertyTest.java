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
import java.util.Random;
import java.util.Set;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * Group formation on 200 random cluster shapes (seeded, so a failure names its seed and repeats):
 * 1 to 7 racks of 1 to 6 nodes, several nodes per host sometimes, labels missing sometimes. The
 * documented bounds: with three failure domains (racks, else hosts) every group has its members
 * in three of them; every node is head, middle and tail in exactly as many groups; every node is
 * in a group; within a domain, nodes' group counts differ by at most 3 (one triple).
 */
class GroupFormationPropertyTest {
    private static final int SHAPES = 200;

    private static List<NodeRecord> randomCluster(Random rnd) {
        int racks = 1 + rnd.nextInt(7);
        boolean rackLabels = rnd.nextInt(6) != 0;
        List<NodeRecord> out = new ArrayList<>();
        int n = 0;
        for (int r = 0; r < racks; r++) {
            int nodes = 1 + rnd.nextInt(6);
            int perHost = 1 + rnd.nextInt(2);
            for (int i = 0; i < nodes; i++) {
                Map<String, String> labels = new HashMap<>();
                labels.put(NodeRecord.LABEL_HOST, "r" + r + "h" + (i / perHost));
                if (rackLabels) {
                    labels.put(NodeRecord.LABEL_RACK, "r" + r);
                }
                out.add(new NodeRecord(String.format("s%03d", n++), "127.0.0.1", 0, 1, 1, labels));
            }
        }
        return out;
    }

    private static Map<String, NodeRecord> byId(List<NodeRecord> nodes) {
        Map<String, NodeRecord> m = new HashMap<>();
        nodes.forEach(x -> m.put(x.id(), x));
        return m;
    }

    /** The asserted bounds, for the groups of {@code nodes}; {@code wholeDomains}: check the within-domain spread. */
    static void assertBounds(String shape, List<NodeRecord> nodes, List<GroupRecord> groups, boolean wholeDomains) {
        Map<String, NodeRecord> byId = byId(nodes);
        Function<NodeRecord, String> domain = GroupLayout.domainOf(nodes);
        Set<Integer> ids = new HashSet<>();
        Map<String, int[]> roles = new HashMap<>();
        for (GroupRecord g : groups) {
            assertTrue(ids.add(g.id()), shape + ": group id twice " + g);
            assertEquals(3, g.members().size(), shape + ": " + g);
            assertEquals(3, new HashSet<>(g.members()).size(), shape + ": a node twice in " + g);
            if (domain != null) {
                assertEquals(3, g.members().stream().map(m -> domain.apply(byId.get(m))).distinct().count(),
                        shape + ": group " + g + " not in three failure domains");
            }
            for (int p = 0; p < 3; p++) {
                roles.computeIfAbsent(g.members().get(p), k -> new int[3])[p]++;
            }
        }
        for (NodeRecord n : nodes) {
            int[] r = roles.get(n.id());
            assertTrue(r != null, shape + ": " + n.id() + " in no group");
            assertTrue(r[0] == r[1] && r[1] == r[2], shape + ": " + n.id() + " head/middle/tail "
                    + java.util.Arrays.toString(r));
        }
        if (wholeDomains && domain != null) {
            Map<String, List<Integer>> perDomain = new HashMap<>();
            for (NodeRecord n : nodes) {
                int[] r = roles.get(n.id());
                perDomain.computeIfAbsent(domain.apply(n), d -> new ArrayList<>()).add(r[0] + r[1] + r[2]);
            }
            perDomain.forEach((d, counts) -> {
                int spread = counts.stream().mapToInt(Integer::intValue).max().orElse(0)
                        - counts.stream().mapToInt(Integer::intValue).min().orElse(0);
                assertTrue(spread <= 3, shape + ": domain " + d + " group counts " + counts);
            });
        }
    }

    private static String describe(long seed, List<NodeRecord> nodes) {
        Map<String, Integer> racks = new java.util.TreeMap<>();
        nodes.forEach(n -> racks.merge(n.rackDomain(), 1, Integer::sum));
        return "seed " + seed + " racks " + racks;
    }

    @Test
    void randomShapesKeepTheBounds() {
        int formed = 0;
        for (long seed = 0; seed < SHAPES; seed++) {
            List<NodeRecord> nodes = randomCluster(new Random(seed));
            List<GroupRecord> groups = GroupLayout.form(nodes);
            if (nodes.size() < 3) {
                assertEquals(List.of(), groups);
                continue;
            }
            formed++;
            assertBounds(describe(seed, nodes), nodes, groups, true);
            List<NodeRecord> reversed = new ArrayList<>(nodes);
            java.util.Collections.reverse(reversed);
            assertEquals(groups, GroupLayout.form(reversed), "deterministic: " + seed);
        }
        assertTrue(formed > SHAPES * 9 / 10, "shapes with groups: " + formed);
    }

    @Test
    void newcomersGetGroupsInThreeDomainsAndTheirShare() {
        for (long seed = 0; seed < SHAPES; seed++) {
            Random rnd = new Random(seed);
            List<NodeRecord> nodes = randomCluster(rnd);
            if (nodes.size() < 3) {
                continue;
            }
            List<GroupRecord> before = GroupLayout.form(nodes);
            List<NodeRecord> all = new ArrayList<>(nodes);
            List<NodeRecord> newcomers = new ArrayList<>();
            int joining = 1 + rnd.nextInt(3);
            for (int i = 0; i < joining; i++) {
                NodeRecord like = nodes.get(rnd.nextInt(nodes.size()));
                NodeRecord n = new NodeRecord("new" + i, "127.0.0.1", 0, 1, 1, like.labels());
                newcomers.add(n);
                all.add(n);
            }
            String shape = describe(seed, all) + " newcomers " + newcomers.stream().map(NodeRecord::rackDomain).toList();
            List<GroupRecord> added = GroupLayout.extend(before, all, newcomers);
            int maxId = before.stream().mapToInt(GroupRecord::id).max().orElseThrow();
            assertTrue(added.stream().allMatch(g -> g.id() > maxId), shape);
            List<GroupRecord> after = new ArrayList<>(before);
            after.addAll(added);
            // Every node (old and new) keeps equal roles; every group spans three domains.
            assertBounds(shape, all, after, false);
            double average = 3.0 * before.size() / nodes.size();
            for (NodeRecord n : newcomers) {
                long in = added.stream().filter(g -> g.members().contains(n.id())).count();
                assertTrue(in >= Math.max(3, Math.round(average)), shape + ": " + n.id() + " in " + in
                        + " groups, members average " + average);
                // Newcomers are the emptiest partners of each other's triples: one more triple per other newcomer.
                assertTrue(in <= Math.max(3, Math.round(average)) + 3L * joining, shape + ": " + n.id() + " in " + in);
            }
        }
    }
}
