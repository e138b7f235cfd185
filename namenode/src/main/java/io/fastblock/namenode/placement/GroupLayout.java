package io.fastblock.namenode.placement;

import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.NodeRecord;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * The replication groups for a set of nodes. Usually one group per node, formed as strided
 * rotations {@code [o_i, o_(i+s), o_(i+2s)]} of an ordering {@code o} of the nodes. Any such
 * rotation makes every node head of exactly one group, middle of one and tail of one, so the
 * log-structured tail work and the in-place head/middle work spread evenly.
 *
 * <p>Failure domains decide the ordering and the stride: the nodes are interleaved rack by rack
 * (and, inside a rack, host by host), so neighbours in the ordering sit in different domains, and
 * the stride that puts the most groups in three distinct racks (then three distinct hosts) wins.
 * When every rack (or host) holds at most a third of the nodes, every group spans three of them.
 *
 * <p>When the domains are too uneven for that ({2, 2, 1} nodes on 3 racks: a rack of 2 would need 6
 * of the 5 groups), {@link TripleLayout} forms 3 groups per node instead, each in three domains,
 * every node head, middle and tail equally often. So with three failure domains or more, every
 * group always spans three; nodes of a small domain are then in more groups (unavoidable: each
 * domain holds a third of the replicas).
 */
public final class GroupLayout {
    public static final int REPLICAS = 3;
    public static final long INITIAL_CHAIN_VERSION = 1;

    private static final int MAX_SHUFFLES = 200;
    private static final int SEARCH_BUDGET = 4_000_000;

    private GroupLayout() {
    }


    /** A domain of r nodes fills 3r chain slots, at most one per group: 3r <= groups, and 3 domains at least. */
    private static boolean feasible(List<NodeRecord> nodes, Function<NodeRecord, String> domain) {
        Map<String, Integer> sizes = new HashMap<>();
        nodes.forEach(n -> sizes.merge(domain.apply(n), 1, Integer::sum));
        return sizes.size() >= REPLICAS && sizes.values().stream().allMatch(r -> REPLICAS * r <= nodes.size());
    }

    /** Groups for nodes known only by id (each its own failure domain), sorted by id. */
    public static List<GroupRecord> rotate(List<String> nodeIds) {
        List<NodeRecord> nodes = new ArrayList<>();
        for (String id : nodeIds) {
            nodes.add(new NodeRecord(id, "", 0, 0, 0));
        }
        return form(nodes);
    }

    /**
     * Groups for {@code nodes} (any order); empty when fewer than {@link #REPLICAS} nodes are given.
     * The rotation when it puts every group in three failure domains (racks when there are three
     * racks, else hosts); otherwise, when there are three such domains, {@link TripleLayout}'s
     * {@code 3k} groups, which always do.
     */
    public static List<GroupRecord> form(List<NodeRecord> nodes) {
        Function<NodeRecord, String> domain = domainOf(nodes);
        if (nodes.size() < REPLICAS) {
            return List.of();
        }
        if (domain == null || feasible(nodes, domain)) {
            // No rotation can span three domains unless each holds at most a third of the nodes.
            List<GroupRecord> rotation = rotation(nodes);
            if (domain == null || spansAll(rotation, nodes, domain)) {
                return rotation;
            }
        }
        TripleLayout triples = new TripleLayout(nodes, domain, List.of());
        List<GroupRecord> out = new ArrayList<>(REPLICAS * nodes.size());
        for (int t = 0; t < nodes.size(); t++) {
            out.addAll(triples.nextTriple(null, out.size() + 1));
        }
        return out;
    }

    /**
     * New groups for {@code newcomers} (live nodes in no group) next to the {@code existing} groups,
     * ids after the highest existing one: triples of a newcomer and two of {@code nodes} (every live
     * node) in other domains, until each newcomer is in at least as many groups as the average
     * member of the existing ones (three at least). Nothing moves: existing groups and the chunks in
     * them stay; the newcomers take new chunks through their new groups.
     */
    public static List<GroupRecord> extend(List<GroupRecord> existing, List<NodeRecord> nodes,
                                           List<NodeRecord> newcomers) {
        if (newcomers.isEmpty() || nodes.size() < REPLICAS) {
            return List.of();
        }
        Function<NodeRecord, String> domain = domainOf(nodes);
        if (domain == null) {
            domain = NodeRecord::id; // fewer than three domains: at least three distinct nodes
        }
        Set<String> members = new HashSet<>();
        long slots = 0;
        for (GroupRecord g : existing) {
            members.addAll(g.members());
            slots += g.members().size();
        }
        int target = Math.max(REPLICAS, members.isEmpty() ? REPLICAS : (int) Math.round((double) slots / members.size()));
        TripleLayout triples = new TripleLayout(nodes, domain, existing);
        int nextId = existing.stream().mapToInt(GroupRecord::id).max().orElse(0) + 1;
        List<GroupRecord> out = new ArrayList<>();
        List<NodeRecord> sorted = sortedById(newcomers);
        while (true) {
            NodeRecord first = null;
            for (NodeRecord n : sorted) {
                if (triples.groupsOf(n.id()) < target
                        && (first == null || triples.groupsOf(n.id()) < triples.groupsOf(first.id()))) {
                    first = n;
                }
            }
            if (first == null) {
                return out;
            }
            List<GroupRecord> made = triples.nextTriple(first, nextId);
            if (made.isEmpty()) {
                return out;
            }
            out.addAll(made);
            nextId += made.size();
        }
    }

    /** Racks when the nodes are on three racks or more, else hosts when on three or more, else null. */
    static Function<NodeRecord, String> domainOf(List<NodeRecord> nodes) {
        if (nodes.stream().map(NodeRecord::rackDomain).distinct().count() >= REPLICAS) {
            return NodeRecord::rackDomain;
        }
        if (nodes.stream().map(NodeRecord::hostDomain).distinct().count() >= REPLICAS) {
            return NodeRecord::hostDomain;
        }
        return null;
    }

    private static boolean spansAll(List<GroupRecord> groups, List<NodeRecord> nodes, Function<NodeRecord, String> domain) {
        Map<String, String> of = new HashMap<>();
        nodes.forEach(n -> of.put(n.id(), domain.apply(n)));
        return groups.stream().allMatch(g -> g.members().stream().map(of::get).distinct().count() == REPLICAS);
    }

    /** The strided rotation: one group per node, each node once head, once middle, once tail. */
    static List<GroupRecord> rotation(List<NodeRecord> nodes) {
        int k = nodes.size();
        if (k < REPLICAS) {
            return List.of();
        }
        List<NodeRecord> interleaved = interleave(nodes, NodeRecord::rackDomain, rack -> interleave(rack,
                NodeRecord::hostDomain, host -> sortedById(host)));
        // The interleaved order is usually perfect; when domains are uneven its wrap-around can put
        // two nodes of one domain together, so a bounded number of seeded shuffles are tried too
        // (deterministic: the same nodes always give the same groups).
        boolean racksPossible = feasible(nodes, NodeRecord::rackDomain);
        boolean hostsPossible = feasible(nodes, NodeRecord::hostDomain);
        List<NodeRecord> order = interleaved;
        int bestStride = 1;
        long[] bestScore = null;
        int tries = Math.max(1, Math.min(MAX_SHUFFLES, SEARCH_BUDGET / (k * k)));
        java.util.Random random = new java.util.Random(k);
        List<NodeRecord> candidate = interleaved;
        for (int t = 0; t <= tries; t++) {
            for (int s = 1; s < k; s++) {
                if ((2 * s) % k == 0) {
                    continue; // o_i and o_(i+2s) would be the same node
                }
                long[] score = score(candidate, s);
                if (bestScore == null || java.util.Arrays.compare(score, bestScore) > 0) {
                    bestScore = score;
                    bestStride = s;
                    order = candidate;
                }
            }
            if (racksPossible && bestScore[0] == REPLICAS && (!hostsPossible || bestScore[2] == REPLICAS)) {
                break;
            }
            candidate = new ArrayList<>(interleaved);
            java.util.Collections.shuffle(candidate, random);
        }
        List<GroupRecord> groups = new ArrayList<>(k);
        for (int i = 0; i < k; i++) {
            List<String> chain = new ArrayList<>(REPLICAS);
            for (int r = 0; r < REPLICAS; r++) {
                chain.add(order.get((i + r * bestStride) % k).id());
            }
            groups.add(new GroupRecord(i + 1, INITIAL_CHAIN_VERSION, chain));
        }
        return groups;
    }

    /**
     * How well a stride spreads groups, compared element by element: racks before hosts; for each,
     * first the worst group (fewest distinct domains), then how many groups span three domains.
     */
    private static long[] score(List<NodeRecord> order, int stride) {
        int k = order.size();
        long minRacks = REPLICAS;
        long fullRacks = 0;
        long minHosts = REPLICAS;
        long fullHosts = 0;
        for (int i = 0; i < k; i++) {
            Set<String> r = new HashSet<>();
            Set<String> h = new HashSet<>();
            for (int j = 0; j < REPLICAS; j++) {
                NodeRecord n = order.get((i + j * stride) % k);
                r.add(n.rackDomain());
                h.add(n.hostDomain());
            }
            minRacks = Math.min(minRacks, r.size());
            fullRacks += r.size() == REPLICAS ? 1 : 0;
            minHosts = Math.min(minHosts, h.size());
            fullHosts += h.size() == REPLICAS ? 1 : 0;
        }
        return new long[] {minRacks, fullRacks, minHosts, fullHosts};
    }

    /**
     * Round robin over the domains of {@code nodes} (largest domain first, then by name), each
     * domain's nodes ordered by {@code inner}: a node is followed by one of another domain while
     * any other domain has nodes left.
     */
    private static List<NodeRecord> interleave(List<NodeRecord> nodes, Function<NodeRecord, String> domain,
                                               Function<List<NodeRecord>, List<NodeRecord>> inner) {
        Map<String, List<NodeRecord>> byDomain = new LinkedHashMap<>();
        for (NodeRecord n : sortedById(nodes)) {
            byDomain.computeIfAbsent(domain.apply(n), d -> new ArrayList<>()).add(n);
        }
        List<List<NodeRecord>> domains = new ArrayList<>();
        List<String> names = new ArrayList<>(byDomain.keySet());
        names.sort(Comparator.<String>comparingInt(d -> -byDomain.get(d).size()).thenComparing(d -> d));
        for (String d : names) {
            domains.add(inner.apply(byDomain.get(d)));
        }
        List<NodeRecord> out = new ArrayList<>(nodes.size());
        for (int round = 0; out.size() < nodes.size(); round++) {
            for (List<NodeRecord> d : domains) {
                if (round < d.size()) {
                    out.add(d.get(round));
                }
            }
        }
        return out;
    }

    private static List<NodeRecord> sortedById(List<NodeRecord> nodes) {
        List<NodeRecord> out = new ArrayList<>(nodes);
        out.sort(Comparator.comparing(NodeRecord::id));
        return out;
    }
}
