package io.fastblock.namenode.repair;

import io.fastblock.namenode.meta.NodeStore.NodeState;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.NodeAdminRecord;
import io.fastblock.protocol.meta.NodeRecord;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Picks the node to join a group, as a pure function of the cluster's state:
 * <ol>
 *   <li>candidates are live, active nodes that are neither members of the group nor joining it;</li>
 *   <li>a node that recently left this group and is back ({@code returning}) wins: it catches up by delta;</li>
 *   <li>otherwise a candidate outside the racks of the group's survivors, else outside their hosts,
 *       else any: never the failure domain of a survivor when another domain has room;</li>
 *   <li>among those, the one in the fewest groups (members and joins), then by id.</li>
 * </ol>
 */
public final class ReplacementChooser {
    private ReplacementChooser() {
    }

    /**
     * @param g         the group needing a member; its members are the survivors, except a draining one,
     *                  which leaves when the join completes and so frees its domain
     * @param nodes     every registered node
     * @param groupLoad how many groups each node is in (member or joining)
     * @param returning a node that left this group recently, or null
     */
    public static Optional<String> choose(GroupRecord g, Map<String, NodeState> nodes, Map<String, Integer> groupLoad,
                                          String returning) {
        List<NodeState> candidates = nodes.values().stream()
                .filter(s -> s.live() && s.active())
                .filter(s -> !g.members().contains(s.record().id()) && !s.record().id().equals(g.joining()))
                .toList();
        if (candidates.isEmpty()) {
            return Optional.empty();
        }
        if (returning != null && candidates.stream().anyMatch(s -> s.record().id().equals(returning))) {
            return Optional.of(returning);
        }
        Set<String> racks = new HashSet<>();
        Set<String> hosts = new HashSet<>();
        for (String m : g.members()) {
            NodeState s = nodes.get(m);
            if (s != null && NodeAdminRecord.DRAINING.equals(s.state())) {
                continue;
            }
            NodeRecord r = s == null ? new NodeRecord(m, "", 0, 0, 0) : s.record();
            racks.add(r.rackDomain());
            hosts.add(r.hostDomain());
        }
        Comparator<NodeState> lightest = Comparator.<NodeState>comparingInt(s -> groupLoad.getOrDefault(s.record().id(), 0))
                .thenComparing(s -> s.record().id());
        Optional<NodeState> otherRack = candidates.stream().filter(s -> !racks.contains(s.record().rackDomain()))
                .min(lightest);
        if (otherRack.isPresent()) {
            return otherRack.map(s -> s.record().id());
        }
        Optional<NodeState> otherHost = candidates.stream().filter(s -> !hosts.contains(s.record().hostDomain()))
                .min(lightest);
        if (otherHost.isPresent()) {
            return otherHost.map(s -> s.record().id());
        }
        return candidates.stream().min(lightest).map(s -> s.record().id());
    }
}
