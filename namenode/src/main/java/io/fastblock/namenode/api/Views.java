package io.fastblock.namenode.api;

import io.fastblock.namenode.capacity.Capacity;
import io.fastblock.namenode.meta.NodeStore.NodeState;
import io.fastblock.protocol.Iqn;
import io.fastblock.protocol.meta.CatchUpProgress;
import io.fastblock.protocol.meta.ExportRecord;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.LeaseRecord;
import io.fastblock.protocol.meta.NodeLoad;
import io.fastblock.protocol.meta.NodeRecord;
import io.fastblock.protocol.meta.QosSpec;
import io.fastblock.protocol.meta.SnapshotRecord;
import io.fastblock.protocol.meta.VolumeSource;
import io.fastblock.protocol.meta.TenantRecord;
import io.fastblock.protocol.meta.VolumeRecord;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;

/** The JSON shapes of the REST contract (field order as documented) and their mapping from metadata records. */
public final class Views {
    private Views() {
    }

    /**
     * {@code source}: what a clone was made from (null otherwise); {@code layers}: the layer stack,
     * bottom first, the last being the id the volume's writes carry ({@code [id]} before any snapshot).
     */
    public record Volume(long id, String name, long size, int blockSize, long chunkSize, String iqn, String state,
                         String createdAt, int allocatedChunks, String tenant, QosSpec qos, String clientId,
                         VolumeSource source, List<Long> layers) {
    }

    /** A snapshot as the contract shows it; {@code id} is the client's id (null when none was given). */
    public record Snapshot(String name, String volume, String id, long size, String createdAt, String state) {
    }

    public record SnapshotList(List<Snapshot> snapshots) {
    }

    public static Snapshot snapshot(SnapshotRecord s) {
        return new Snapshot(s.name(), s.volume(), s.clientId(), s.size(), s.createdAt(), s.state());
    }

    public record VolumeList(List<Volume> volumes) {
    }

    public record Node(String id, String host, int port, boolean live, long capacityBytes, long freeBytes,
                       Map<String, String> labels, String state, Load load) {
    }

    /** A node's last heartbeat: free space and requests in flight by class; null without one. */
    public record Load(long capacityBytes, long freeBytes, Map<String, Integer> queueDepth, String reportedAt) {
    }

    public record NodeList(List<Node> nodes) {
    }

    /** host and port are null for a member whose node record is missing. */
    public record Member(String id, String host, Integer port, boolean live) {
    }

    /** A joining node and how far its catch-up is, when the storage server reports it. */
    public record Joining(String id, String host, Integer port, boolean live, Long copiedBytes, Long totalBytes) {
    }

    public record Group(int id, long chainVersion, List<Member> members, Joining joining, boolean degraded) {
    }

    public record GroupList(List<Group> groups) {
    }

    public record Chunk(long index, boolean allocated, Group group) {
    }

    public record Leadership(boolean leader, String leaderUrl) {
    }

    public record Status(List<Node> nodes, List<Group> groups, int volumes, int allocatedChunks, Capacity capacity,
                         int degradedGroups, Leadership namenode, List<Down> down) {
    }

    /**
     * A group member that lost its session, as the down/out interval sees it. state: {@code waiting}
     * (down, its groups wait for it until replaceAt), {@code replacing} (down past replaceAt, or draining:
     * re-replicated elsewhere), {@code rejoining} (back, catching up in the groups listed).
     */
    public record Down(String id, String downSince, String replaceAt, String backSince, List<Integer> groups,
                       String state) {
    }

    /** The down records as the status shows them, by node id. */
    public static List<Down> down(Map<String, io.fastblock.protocol.meta.DownRecord> records,
                                  Map<String, NodeState> nodes, java.time.Duration replaceAfter, long nowMillis) {
        List<Down> out = new java.util.ArrayList<>();
        for (io.fastblock.protocol.meta.DownRecord r : records.values()) {
            NodeState n = nodes.get(r.id());
            long replaceAt = io.fastblock.namenode.repair.DownOutRules.replaceAtMillis(r, n, replaceAfter.toMillis());
            String state = r.back() ? "rejoining" : nowMillis < replaceAt ? "waiting" : "replacing";
            out.add(new Down(r.id(), java.time.Instant.ofEpochMilli(r.downSinceMillis()).toString(),
                    java.time.Instant.ofEpochMilli(replaceAt).toString(),
                    r.back() ? java.time.Instant.ofEpochMilli(r.backSinceMillis()).toString() : null, r.groups(), state));
        }
        return out;
    }

    public record Health(String status) {
    }

    public record Chap(String user, String secret, String targetUser, String targetSecret) {
    }

    public record Export(String volume, String iqn, String initiator, String host, Chap chap, String createdAt) {
    }

    public record ExportList(List<Export> exports) {
    }

    public record Access(boolean allowed, String target, String initiator, String volume, Chap chap, String reason) {
    }

    public record Lease(String volume, long volumeId, String holder, long epoch, String expiresAt, long ttlMs) {
    }

    public record TenantList(List<TenantRecord> tenants) {
    }

    public static Volume volume(VolumeRecord v, int allocatedChunks) {
        return new Volume(v.id(), v.name(), v.size(), v.blockSize(), v.chunkSize(), Iqn.forVolume(v.name()), v.state(),
                v.createdAt(), allocatedChunks, v.tenant(), v.qos(), v.clientId(), v.source(), v.layerStack());
    }

    public static Node node(NodeState s) {
        NodeRecord r = s.record();
        NodeLoad l = s.load();
        Load load = l == null ? null : new Load(l.capacityBytes(), l.freeBytes(), l.queueDepth(),
                Instant.ofEpochMilli(l.reportedAtMillis()).toString());
        return new Node(r.id(), r.host(), r.port(), s.live(), r.capacityBytes(), s.freeBytes(), r.labels(), s.state(),
                load);
    }

    public static List<Node> nodes(Map<String, NodeState> nodes) {
        return nodes.values().stream().map(Views::node).toList();
    }

    public static Group group(GroupRecord g, Map<String, NodeState> nodes) {
        return group(g, nodes, (group, node) -> null);
    }

    /** {@code progress} gives the catch-up progress of a group's joining node (null when not reported). */
    public static Group group(GroupRecord g, Map<String, NodeState> nodes,
                              BiFunction<Integer, String, CatchUpProgress> progress) {
        List<Member> members = new ArrayList<>(g.members().size());
        boolean degraded = g.members().size() < Capacity.REPLICAS;
        for (String id : g.members()) {
            NodeState s = nodes.get(id);
            members.add(s == null
                    ? new Member(id, null, null, false)
                    : new Member(id, s.record().host(), s.record().port(), s.live()));
            degraded |= s == null || !s.live();
        }
        Joining joining = null;
        if (g.joining() != null) {
            NodeState s = nodes.get(g.joining());
            CatchUpProgress p = progress.apply(g.id(), g.joining());
            joining = new Joining(g.joining(), s == null ? null : s.record().host(),
                    s == null ? null : s.record().port(), s != null && s.live(),
                    p == null ? null : p.copiedBytes(), p == null ? null : p.totalBytes());
        }
        return new Group(g.id(), g.chainVersion(), members, joining, degraded);
    }

    public static List<Group> groups(List<GroupRecord> groups, Map<String, NodeState> nodes) {
        return groups.stream().map(g -> group(g, nodes)).toList();
    }

    public static Export export(ExportRecord e) {
        Chap chap = e.chap() ? new Chap(e.chapUser(), e.chapSecret(), e.targetUser(), e.targetSecret()) : null;
        return new Export(e.volume(), Iqn.forVolume(e.volume()), e.initiator(), e.host(), chap, e.createdAt());
    }

    public static Lease lease(LeaseRecord l, long ttlMs) {
        return new Lease(l.volume(), l.volumeId(), l.holder(), l.epoch(),
                Instant.ofEpochMilli(l.expiresAtMillis()).toString(), ttlMs);
    }
}
