package io.fastblock.namenode.placement;

import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.NodeRecord;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * Groups built from triples of nodes in three distinct failure domains, each triple giving three
 * groups with its members rotated through the roles: {@code [a,b,c]}, {@code [b,c,a]},
 * {@code [c,a,b]}. So every group spans three domains, and every node is head, middle and tail in
 * exactly as many groups as each other (whatever the domains' sizes).
 *
 * <p>Members are chosen greedily: the node in the fewest groups first (so the nodes of a domain
 * differ by at most one triple), then, among equals, the node that shared the fewest triples with
 * the members already chosen (peers spread, so a failed node's data is copied from many), then
 * (hosts being the domain) one on a rack not yet in the triple.
 *
 * <p>Used where {@link GroupLayout}'s one-group-per-node rotation cannot put every group in three
 * domains (uneven domains: {2, 2, 1} nodes per rack), and for nodes that join after the groups
 * were formed.
 */
final class TripleLayout {
    private final List<NodeRecord> nodes;
    private final Function<NodeRecord, String> domain;
    private final Map<String, Integer> groupsOf = new HashMap<>();
    private final Map<String, Integer> together = new HashMap<>();
    private int step;

    /** {@code nodes}: who may be chosen; {@code existing}: groups already formed (counted, never changed). */
    TripleLayout(List<NodeRecord> nodes, Function<NodeRecord, String> domain, List<GroupRecord> existing) {
        List<NodeRecord> sorted = new ArrayList<>(nodes);
        sorted.sort(Comparator.comparing(NodeRecord::id));
        this.nodes = sorted;
        this.domain = domain;
        for (GroupRecord g : existing) {
            for (String m : g.members()) {
                groupsOf.merge(m, 1, Integer::sum);
            }
            for (String a : g.members()) {
                for (String b : g.members()) {
                    if (a.compareTo(b) < 0) {
                        together.merge(pair(a, b), 1, Integer::sum);
                    }
                }
            }
        }
    }

    /** How many groups {@code node} is in (existing and built so far). */
    int groupsOf(String node) {
        return groupsOf.getOrDefault(node, 0);
    }

    /**
     * The next triple's three groups, ids from {@code firstId}; {@code first}, when not null, is
     * its first member. Empty when three domains cannot be had.
     */
    List<GroupRecord> nextTriple(NodeRecord first, int firstId) {
        List<NodeRecord> chosen = new ArrayList<>(3);
        if (first != null) {
            chosen.add(first);
        }
        while (chosen.size() < GroupLayout.REPLICAS) {
            NodeRecord best = null;
            for (int i = 0; i < nodes.size(); i++) {
                // Rotating where the scan starts spreads the ties over the nodes from one triple to the next.
                NodeRecord n = nodes.get((i + step) % nodes.size());
                if (eligible(n, chosen) && (best == null || better(n, best, chosen))) {
                    best = n;
                }
            }
            if (best == null) {
                return List.of();
            }
            chosen.add(best);
        }
        step++;
        List<String> ids = chosen.stream().map(NodeRecord::id).toList();
        for (String id : ids) {
            groupsOf.merge(id, GroupLayout.REPLICAS, Integer::sum);
        }
        for (int i = 0; i < ids.size(); i++) {
            for (int j = i + 1; j < ids.size(); j++) {
                together.merge(pair(ids.get(i), ids.get(j)), GroupLayout.REPLICAS, Integer::sum);
            }
        }
        List<GroupRecord> out = new ArrayList<>(GroupLayout.REPLICAS);
        for (int r = 0; r < GroupLayout.REPLICAS; r++) {
            List<String> chain = new ArrayList<>(GroupLayout.REPLICAS);
            for (int p = 0; p < GroupLayout.REPLICAS; p++) {
                chain.add(ids.get((r + p) % GroupLayout.REPLICAS));
            }
            out.add(new GroupRecord(firstId + r, GroupLayout.INITIAL_CHAIN_VERSION, chain));
        }
        return out;
    }

    private boolean eligible(NodeRecord n, List<NodeRecord> chosen) {
        for (NodeRecord c : chosen) {
            if (c.id().equals(n.id()) || domain.apply(c).equals(domain.apply(n))) {
                return false;
            }
        }
        return true;
    }

    /** Whether {@code a} is a better next member than {@code b} (strictly; ties keep the earlier in the scan). */
    private boolean better(NodeRecord a, NodeRecord b, List<NodeRecord> chosen) {
        int ca = groupsOf(a.id());
        int cb = groupsOf(b.id());
        if (ca != cb) {
            return ca < cb;
        }
        int ta = togetherWith(a, chosen);
        int tb = togetherWith(b, chosen);
        if (ta != tb) {
            return ta < tb;
        }
        return newRack(a, chosen) && !newRack(b, chosen);
    }

    private int togetherWith(NodeRecord n, List<NodeRecord> chosen) {
        int sum = 0;
        for (NodeRecord c : chosen) {
            sum += together.getOrDefault(pair(n.id(), c.id()), 0);
        }
        return sum;
    }

    private static boolean newRack(NodeRecord n, List<NodeRecord> chosen) {
        Set<String> racks = new HashSet<>();
        chosen.forEach(c -> racks.add(c.rackDomain()));
        return !racks.contains(n.rackDomain());
    }

    private static String pair(String a, String b) {
        return a.compareTo(b) < 0 ? a + "\u0000" + b : b + "\u0000" + a;
    }
}
