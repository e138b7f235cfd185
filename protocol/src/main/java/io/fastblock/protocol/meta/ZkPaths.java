package io.fastblock.protocol.meta;

/**
 * The ZooKeeper layout shared by the namenode (which owns it) and the storage servers (which
 * register themselves and read group membership).
 *
 * <pre>
 * /fastblock/nodes/{nodeId}              persistent  NodeRecord JSON (address, capacity)
 * /fastblock/live/{nodeId}               ephemeral   written by the storage server's own session
 * /fastblock/groups/{groupId}            persistent  GroupRecord JSON (chain order, chain version)
 * /fastblock/groups/{groupId}/caught-up/{nodeId}  persistent  created by a joining node once caught up
 * /fastblock/volumes/{name}              persistent  VolumeRecord JSON
 * /fastblock/volumes/{name}/chunkmap/{b} persistent  ChunkMapBucket bytes: group id per chunk
 * /fastblock/counters/volume-id          persistent  next volume id (versioned CAS)
 * </pre>
 */
public final class ZkPaths {
    public static final String ROOT = "/fastblock";
    public static final String NODES = ROOT + "/nodes";
    public static final String LIVE = ROOT + "/live";
    public static final String GROUPS = ROOT + "/groups";
    public static final String VOLUMES = ROOT + "/volumes";
    public static final String COUNTERS = ROOT + "/counters";
    public static final String VOLUME_ID_COUNTER = COUNTERS + "/volume-id";

    private ZkPaths() {
    }

    public static String node(String nodeId) {
        return NODES + "/" + nodeId;
    }

    public static String live(String nodeId) {
        return LIVE + "/" + nodeId;
    }

    public static String group(int groupId) {
        return GROUPS + "/" + String.format("%010d", groupId);
    }

    /** Created by the joining node of a group once it holds everything the tail holds. */
    public static String caughtUp(int groupId, String nodeId) {
        return group(groupId) + "/caught-up/" + nodeId;
    }

    public static int groupIdOf(String childName) {
        return Integer.parseInt(childName);
    }

    public static String volume(String name) {
        return VOLUMES + "/" + name;
    }

    public static String chunkMap(String volumeName) {
        return volume(volumeName) + "/chunkmap";
    }

    public static String chunkMapBucket(String volumeName, long bucket) {
        return chunkMap(volumeName) + "/" + bucket;
    }
}
