package io.fastblock.namenode.repair;

import io.fastblock.namenode.meta.NodeStore.NodeState;
import io.fastblock.protocol.meta.DownRecord;
import io.fastblock.protocol.meta.GroupRecord;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The down/out interval (Ceph's {@code mon_osd_down_out_interval}) as a pure function of the cluster:
 * a member whose session expired leaves its chains at once, but its groups wait up to
 * {@code replaceAfterMillis} for it before a replacement is chosen elsewhere, so a server back from
 * a short outage (a restart, a reboot) catches up by delta instead of being copied whole onto
 * another node.
 *
 * <ul>
 *   <li>A node that is not live while a member of some group gets a {@link DownRecord} (since now,
 *       with those groups). A node seen live again is marked back; if it is lost again later, a new
 *       interval starts.</li>
 *   <li>While the interval runs and the node is down and active (a draining node is not waited for:
 *       it was leaving anyway), its groups are <em>waiting</em>: the planner does not start a join
 *       there unless the group is down to one copy (one copy left is an emergency).</li>
 *   <li>A live node with a record is <em>returning</em> to the groups still listed: the chooser
 *       prefers it there, so it catches up by delta. This holds after the interval too while a
 *       group has not got another joiner yet (a join slot is throttled); once a group has a joiner
 *       or three members without the node, it is dropped from the record, and a node whose record
 *       is empty is an ordinary (fresh) server.</li>
 * </ul>
 */
public final class DownOutRules {
    /** What the round must write before planning, and what the planner must respect. */
    public record Outcome(Map<String, DownRecord> put, Set<String> delete, Set<Integer> waiting,
                          Map<Integer, String> returning, Map<String, DownRecord> records) {
    }

    private DownOutRules() {
    }

    /**
     * @param groups             every group as read
     * @param nodes              every registered node
     * @param records            the down records as read
     * @param nowMillis          the leader's wall clock
     * @param replaceAfterMillis the down/out interval
     */
    public static Outcome apply(List<GroupRecord> groups, Map<String, NodeState> nodes, Map<String, DownRecord> records,
                                long nowMillis, long replaceAfterMillis) {
        Map<Integer, GroupRecord> byId = new HashMap<>();
        Map<String, List<Integer>> memberOf = new HashMap<>();
        for (GroupRecord g : groups) {
            byId.put(g.id(), g);
            for (String m : g.members()) {
                memberOf.computeIfAbsent(m, k -> new ArrayList<>()).add(g.id());
            }
        }
        Map<String, DownRecord> put = new HashMap<>();
        Set<String> delete = new HashSet<>();
        Map<String, DownRecord> after = new HashMap<>();
        for (DownRecord r : records.values()) {
            if (!nodes.containsKey(r.id())) {
                delete.add(r.id()); // unregistered: nothing to wait for
            }
        }
        for (NodeState s : nodes.values()) {
            String id = s.record().id();
            DownRecord r = records.get(id);
            List<Integer> member = memberOf.getOrDefault(id, List.of());
            DownRecord next = r;
            if (!s.live()) {
                if (r == null) {
                    next = member.isEmpty() ? null : new DownRecord(id, nowMillis, member, 0);
                } else if (r.back()) {
                    next = new DownRecord(id, nowMillis, union(r.groups(), member), 0);
                } else {
                    next = new DownRecord(id, r.downSinceMillis(), union(r.groups(), member), 0);
                }
            } else if (r != null && !r.back()) {
                next = new DownRecord(id, r.downSinceMillis(), r.groups(), nowMillis);
            }
            if (next != null) {
                List<Integer> still = new ArrayList<>();
                for (int gid : next.groups()) {
                    if (stillWaitsFor(byId.get(gid), id, s.live())) {
                        still.add(gid);
                    }
                }
                next = new DownRecord(id, next.downSinceMillis(), still, next.backSinceMillis());
                if (still.isEmpty()) {
                    next = null;
                }
            }
            if (next == null) {
                if (r != null) {
                    delete.add(id);
                }
                continue;
            }
            after.put(id, next);
            if (!next.equals(r)) {
                put.put(id, next);
            }
        }

        Set<Integer> waiting = new HashSet<>();
        Map<Integer, String> returning = new HashMap<>();
        for (DownRecord r : after.values()) {
            NodeState s = nodes.get(r.id());
            if (s.live()) {
                r.groups().forEach(g -> returning.put(g, r.id()));
            } else if (nowMillis < replaceAtMillis(r, s, replaceAfterMillis)) {
                waiting.addAll(r.groups());
            }
        }
        return new Outcome(put, delete, waiting, returning, after);
    }

    /**
     * When the groups of the down node stop waiting for it: after the down/out interval for an active
     * node, at once for one being drained (it is leaving anyway). {@code state} null counts as active.
     */
    public static long replaceAtMillis(DownRecord r, NodeState state, long replaceAfterMillis) {
        return r.downSinceMillis() + (state == null || state.active() ? replaceAfterMillis : 0);
    }

    /**
     * A group still wants {@code node} back unless it is gone, or the node is a member again (it
     * rejoined; a member that is not live is still to be taken out), or it is whole without it or has
     * another joiner that makes it whole (it was replaced there). A group
     * in which the node itself is joining still lists it until the join completes.
     */
    private static boolean stillWaitsFor(GroupRecord g, String node, boolean live) {
        if (g == null) {
            return false;
        }
        if (node.equals(g.joining())) {
            return true;
        }
        if (g.joining() != null) {
            // Another joiner replaces it, unless the group stays short even with it (it lost two).
            return g.members().size() + (g.members().contains(node) ? 0 : 1) < 3;
        }
        if (g.members().contains(node)) {
            // Live: it rejoined. Not live: it has not left yet (the planner takes it out this same round).
            return !live;
        }
        return g.members().size() < 3;
    }

    private static List<Integer> union(List<Integer> a, List<Integer> b) {
        Set<Integer> out = new LinkedHashSet<>(a);
        out.addAll(b);
        return List.copyOf(out);
    }
}
