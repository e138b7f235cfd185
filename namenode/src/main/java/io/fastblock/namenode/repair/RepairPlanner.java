package io.fastblock.namenode.repair;

import io.fastblock.namenode.meta.NodeStore.NodeState;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.NodeAdminRecord;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Decides one round of chain repair from a snapshot of the cluster, without touching ZooKeeper:
 * <ol>
 *   <li>members whose node is not live leave their chains ({@link ChainRules#remove}); a joining
 *       node that is not live is dropped;</li>
 *   <li>a joining node that announced it caught up becomes the tail ({@link ChainRules#completeJoin}),
 *       taking the place of a draining member if the group has one;</li>
 *   <li>groups short of members, then groups holding a draining node (one group per draining node
 *       at a time), get a joining node, while fewer than {@code maxJoins} joins run; a group that
 *       waits for a down member ({@link DownOutRules}) gets none while it still has two copies;</li>
 *   <li>a draining node in no group is decommissioned.</li>
 * </ol>
 * Each group changes at most once per round, so every change can be one compare-and-set.
 */
public final class RepairPlanner {
    /** A group change: replace {@code before} with {@code after}. {@code caughtUpNode} names a marker to delete after. */
    public record Change(GroupRecord before, GroupRecord after, String reason, String caughtUpNode) {
    }

    /** What the round decided. */
    public record Plan(List<Change> changes, List<String> decommission, List<Departure> departed) {
    }

    /** A node that left a group in this round (remembered so it is preferred if it comes back soon). */
    public record Departure(int groupId, String nodeId) {
    }

    private RepairPlanner() {
    }

    /**
     * @param groups    every group, by id
     * @param nodes     every registered node with live flag and admin state
     * @param caughtUp  group id to the nodes that announced catch-up there
     * @param returning group id to a node that left it recently (preferred as its replacement)
     * @param maxJoins  joins allowed to run at once, cluster-wide
     */
    public static Plan plan(List<GroupRecord> groups, Map<String, NodeState> nodes, Map<Integer, List<String>> caughtUp,
                            Map<Integer, String> returning, int maxJoins) {
        return plan(groups, nodes, caughtUp, returning, Set.of(), maxJoins);
    }

    /**
     * As {@link #plan(List, Map, Map, Map, int)}, with {@code waiting}: groups whose down member is still
     * inside its down/out interval. They are not given a replacement while they hold two copies or more;
     * down to one copy, they are repaired at once (one more failure would lose the data).
     */
    public static Plan plan(List<GroupRecord> groups, Map<String, NodeState> nodes, Map<Integer, List<String>> caughtUp,
                            Map<Integer, String> returning, Set<Integer> waiting, int maxJoins) {
        List<Change> changes = new ArrayList<>();
        Map<Integer, GroupRecord> current = new HashMap<>();
        List<Departure> departed = new ArrayList<>();
        for (GroupRecord g : groups) {
            current.put(g.id(), g);
        }
        Set<Integer> changed = new HashSet<>();

        // 1. Failures.
        for (GroupRecord g : groups) {
            Set<String> failed = new HashSet<>();
            for (String m : g.members()) {
                if (!isLive(nodes, m)) {
                    failed.add(m);
                }
            }
            if (g.joining() != null && !isLive(nodes, g.joining())) {
                failed.add(g.joining());
            }
            if (failed.isEmpty()) {
                continue;
            }
            GroupRecord after = ChainRules.remove(g, failed);
            if (!after.equals(g)) {
                changes.add(new Change(g, after, "not live: " + failed, null));
                current.put(g.id(), after);
                changed.add(g.id());
                for (String m : g.members()) {
                    if (failed.contains(m) && !after.members().contains(m)) {
                        departed.add(new Departure(g.id(), m));
                    }
                }
            }
        }

        // 2. Completed catch-ups.
        for (GroupRecord g : groups) {
            if (changed.contains(g.id()) || g.joining() == null) {
                continue;
            }
            if (caughtUp.getOrDefault(g.id(), List.of()).contains(g.joining())) {
                String leaving = g.members().size() >= 3 ? drainingMember(g, nodes).orElse(null) : null;
                if (g.members().size() >= 3 && leaving == null) {
                    continue; // nothing to replace (should not happen): leave it joining
                }
                GroupRecord after = ChainRules.completeJoin(g, leaving);
                changes.add(new Change(g, after, g.joining() + " caught up" + (leaving == null ? ""
                        : ", replacing draining " + leaving), g.joining()));
                current.put(g.id(), after);
                changed.add(g.id());
            }
        }

        // 3. New joins, throttled.
        int running = 0;
        Map<String, Integer> load = new HashMap<>();
        Set<String> drainingBusy = new HashSet<>();
        for (GroupRecord g : current.values()) {
            g.members().forEach(m -> load.merge(m, 1, Integer::sum));
            if (g.joining() != null) {
                running++;
                load.merge(g.joining(), 1, Integer::sum);
                drainingMember(g, nodes).ifPresent(drainingBusy::add);
            }
        }
        List<GroupRecord> needy = new ArrayList<>();
        for (GroupRecord g : current.values()) {
            if (g.joining() == null && (g.members().size() < 3 || drainingMember(g, nodes).isPresent())) {
                needy.add(g);
            }
        }
        // Fewest members first: a group down to one copy is repaired before one with two.
        needy.sort(Comparator.<GroupRecord>comparingInt(g -> g.members().size()).thenComparingInt(GroupRecord::id));
        for (GroupRecord g : needy) {
            if (running >= maxJoins) {
                break;
            }
            if (g.members().isEmpty() || g.members().stream().noneMatch(m -> isLive(nodes, m))) {
                continue; // no live source to copy from
            }
            String back = returning.get(g.id());
            boolean returnable = back != null && isLive(nodes, back);
            if (waiting.contains(g.id()) && g.members().size() >= 2 && !returnable) {
                continue; // its down member may come back and catch up by delta: not replaced yet
            }
            Optional<String> draining = g.members().size() >= 3 ? drainingMember(g, nodes) : Optional.empty();
            if (draining.isPresent() && drainingBusy.contains(draining.get())) {
                continue; // drains move one group at a time per node
            }
            Optional<String> pick = ReplacementChooser.choose(g, nodes, load, returning.get(g.id()));
            if (pick.isEmpty()) {
                continue;
            }
            GroupRecord before = current.get(g.id());
            GroupRecord after = ChainRules.startJoin(before, pick.get());
            replaceOrAdd(changes, before, after, draining.isPresent() ? "draining " + draining.get() + ": "
                    + pick.get() + " joins" : "short of members: " + pick.get() + " joins");
            current.put(g.id(), after);
            running++;
            load.merge(pick.get(), 1, Integer::sum);
            draining.ifPresent(drainingBusy::add);
        }

        // 4. Drained nodes.
        List<String> decommission = new ArrayList<>();
        for (NodeState s : nodes.values()) {
            if (!NodeAdminRecord.DRAINING.equals(s.state())) {
                continue;
            }
            String id = s.record().id();
            boolean inUse = current.values().stream().anyMatch(g -> g.members().contains(id) || id.equals(g.joining()));
            if (!inUse) {
                decommission.add(id);
            }
        }
        return new Plan(changes, decommission, departed);
    }

    /** A change to a group already changed this round folds into one compare-and-set from the original. */
    private static void replaceOrAdd(List<Change> changes, GroupRecord before, GroupRecord after, String reason) {
        for (int i = 0; i < changes.size(); i++) {
            Change c = changes.get(i);
            if (c.before().id() == before.id()) {
                changes.set(i, new Change(c.before(), after, c.reason() + "; " + reason, c.caughtUpNode()));
                return;
            }
        }
        changes.add(new Change(before, after, reason, null));
    }

    private static Optional<String> drainingMember(GroupRecord g, Map<String, NodeState> nodes) {
        return g.members().stream().filter(m -> {
            NodeState s = nodes.get(m);
            return s != null && NodeAdminRecord.DRAINING.equals(s.state());
        }).findFirst();
    }

    private static boolean isLive(Map<String, NodeState> nodes, String id) {
        NodeState s = nodes.get(id);
        return s != null && s.live();
    }
}
