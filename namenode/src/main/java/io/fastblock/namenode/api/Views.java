package io.fastblock.namenode.api;

import io.fastblock.namenode.meta.NodeStore.NodeState;
import io.fastblock.protocol.Iqn;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.NodeRecord;
import io.fastblock.protocol.meta.VolumeRecord;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The JSON shapes of the REST contract (field order as documented) and their mapping from metadata records. */
public final class Views {
    private Views() {
    }

    public record Volume(long id, String name, long size, int blockSize, long chunkSize, String iqn, String state,
                         String createdAt, int allocatedChunks) {
    }

    public record VolumeList(List<Volume> volumes) {
    }

    public record Node(String id, String host, int port, boolean live, long capacityBytes, long freeBytes) {
    }

    public record NodeList(List<Node> nodes) {
    }

    /** host and port are null for a member whose node record is missing. */
    public record Member(String id, String host, Integer port, boolean live) {
    }

    public record Group(int id, long chainVersion, List<Member> members) {
    }

    public record GroupList(List<Group> groups) {
    }

    public record Chunk(long index, boolean allocated, Group group) {
    }

    public record Status(List<Node> nodes, List<Group> groups, int volumes, int allocatedChunks) {
    }

    public record Health(String status) {
    }

    public static Volume volume(VolumeRecord v, int allocatedChunks) {
        return new Volume(v.id(), v.name(), v.size(), v.blockSize(), v.chunkSize(), Iqn.forVolume(v.name()), v.state(),
                v.createdAt(), allocatedChunks);
    }

    public static Node node(NodeState s) {
        NodeRecord r = s.record();
        return new Node(r.id(), r.host(), r.port(), s.live(), r.capacityBytes(), r.freeBytes());
    }

    public static List<Node> nodes(Map<String, NodeState> nodes) {
        return nodes.values().stream().map(Views::node).toList();
    }

    public static Group group(GroupRecord g, Map<String, NodeState> nodes) {
        List<Member> members = new ArrayList<>(g.members().size());
        for (String id : g.members()) {
            NodeState s = nodes.get(id);
            members.add(s == null
                    ? new Member(id, null, null, false)
                    : new Member(id, s.record().host(), s.record().port(), s.live()));
        }
        return new Group(g.id(), g.chainVersion(), members);
    }

    public static List<Group> groups(List<GroupRecord> groups, Map<String, NodeState> nodes) {
        return groups.stream().map(g -> group(g, nodes)).toList();
    }
}
