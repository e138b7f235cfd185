package io.fastblock.namenode.repair;

import io.fastblock.protocol.meta.GroupRecord;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * Chain replication's reconfiguration rules as pure functions on {@link GroupRecord}s.
 *
 * <p>Removing members keeps the survivors in their order, which is exactly the paper's rules: a
 * failed head's successor becomes head, a failed tail's predecessor becomes tail, and a failed
 * middle's predecessor links to its successor. Every change of members bumps the chain version
 * once; naming or clearing the joining node does not (the chain that serves requests is the same).
 */
public final class ChainRules {
    private ChainRules() {
    }

    /**
     * The group without {@code failed} members, chain version bumped once if any was a member. A
     * joining node among them is dropped too. Returns {@code g} itself when nothing changes.
     * Never removes the last member: a group whose every member failed keeps them, since
     * the data has nowhere else to come from.
     */
    public static GroupRecord remove(GroupRecord g, Collection<String> failed) {
        List<String> survivors = new ArrayList<>(g.members().size());
        for (String m : g.members()) {
            if (!failed.contains(m)) {
                survivors.add(m);
            }
        }
        String joining = g.joining() != null && failed.contains(g.joining()) ? null : g.joining();
        if (survivors.isEmpty()) {
            return joining == null && g.joining() != null ? new GroupRecord(g.id(), g.chainVersion(), g.members(), null) : g;
        }
        if (survivors.size() == g.members().size()) {
            return joining == null && g.joining() != null ? new GroupRecord(g.id(), g.chainVersion(), g.members(), null) : g;
        }
        return new GroupRecord(g.id(), g.chainVersion() + 1, survivors, joining);
    }

    /** The group with {@code node} catching up to join it. */
    public static GroupRecord startJoin(GroupRecord g, String node) {
        if (g.joining() != null) {
            throw new IllegalStateException("group " + g.id() + " already has joining node " + g.joining());
        }
        if (g.members().contains(node)) {
            throw new IllegalArgumentException(node + " is already a member of group " + g.id());
        }
        return new GroupRecord(g.id(), g.chainVersion(), g.members(), node);
    }

    /**
     * The caught-up joining node made a member at the tail (it holds everything the old tail held,
     * and the old tail's forwarding to it becomes ordinary chain forwarding), chain version bumped.
     * When {@code leaving} is a member (a drained node), it leaves in the same change, so the group
     * never drops below its size.
     */
    public static GroupRecord completeJoin(GroupRecord g, String leaving) {
        if (g.joining() == null) {
            throw new IllegalStateException("group " + g.id() + " has no joining node");
        }
        List<String> members = new ArrayList<>(g.members());
        if (leaving != null) {
            members.remove(leaving);
        }
        members.add(g.joining());
        return new GroupRecord(g.id(), g.chainVersion() + 1, members, null);
    }

    /** The group without its joining node (it failed, or left), chain version unchanged. */
    public static GroupRecord abandonJoin(GroupRecord g) {
        return g.joining() == null ? g : new GroupRecord(g.id(), g.chainVersion(), g.members(), null);
    }
}
