package io.fastblock.protocol.meta;

/**
 * The ZooKeeper layout shared by the namenode (which owns it) and the storage servers (which
 * register themselves and read group membership).
 *
 * <pre>
 * /fastblock/nodes/{nodeId}              persistent  NodeRecord JSON (address, capacity)
 * /fastblock/live/{nodeId}               ephemeral   written by the storage server's own session
 * /fastblock/load/{nodeId}               ephemeral   NodeLoad JSON: the server's heartbeat (free space, queue depths)
 * /fastblock/groups/{groupId}            persistent  GroupRecord JSON (chain order, chain version)
 * /fastblock/groups/{groupId}/caught-up/{nodeId}  persistent  created by a joining node once caught up
 * /fastblock/groups/{groupId}/progress/{nodeId}   persistent  CatchUpProgress JSON, optional, by the joining node
 * /fastblock/volumes/{name}              persistent  VolumeRecord JSON
 * /fastblock/volumes/{name}/chunkmap/{b} persistent  ChunkMapBucket bytes: group id per chunk
 * /fastblock/volumes/{name}/exports/{i}  persistent  ExportRecord JSON; i = URL-encoded initiator IQN or "*"
 * /fastblock/volumes/{name}/snapshots/{s} persistent SnapshotRecord JSON: the sealed layers it covers
 * /fastblock/layers/{layerId}            persistent  LayerRecord JSON
 * /fastblock/layers/{layerId}/chunkmap/{b} persistent ChunkMapBucket bytes of the layer
 * /fastblock/reclaim/{layerId}           persistent  ReclaimRecord JSON: space the leader gives back
 * /fastblock/counters/volume-id          persistent  next volume id (versioned CAS)
 * /fastblock/counters/provisioned-bytes  persistent  sum of all volume sizes (versioned, in each create/delete/extend)
 * /fastblock/client-ids/{clientId}       persistent  name of the volume created with this client id
 * /fastblock/tenants/{name}              persistent  TenantRecord JSON (fair-share weight)
 * /fastblock/leases/{volumeId}           persistent  LeaseRecord JSON: write lease holder, epoch, expiry
 * /fastblock/fences/{volumeId}           persistent  lease-epoch floor of a volume id, decimal text;
 *                                                   Long.MAX_VALUE = sealed (VolumeFences)
 * /fastblock/sealed-ids                  persistent  SealedIds text "3-7,9": sealed ids of reclaimed layers,
 *                                                   whose fences/ znodes are gone
 * /fastblock/node-admin/{nodeId}         persistent  NodeAdminRecord JSON: active / draining / decommissioned
 * /fastblock/down/{nodeId}               persistent  DownRecord JSON: a group member whose session expired, since
 *                                                   when, and the groups that wait for it (down/out interval)
 * /fastblock/namenodes/leader/...        ephemeral   Curator LeaderLatch participants (id = the namenode's URL)
 * </pre>
 */
public final class ZkPaths {
    public static final String ROOT = "/fastblock";
    public static final String NODES = ROOT + "/nodes";
    public static final String LIVE = ROOT + "/live";
    public static final String LOAD = ROOT + "/load";
    public static final String GROUPS = ROOT + "/groups";
    public static final String VOLUMES = ROOT + "/volumes";
    public static final String COUNTERS = ROOT + "/counters";
    public static final String VOLUME_ID_COUNTER = COUNTERS + "/volume-id";
    /** Sum of all volume sizes, decimal; written in the same transaction as every create, delete and extend. */
    public static final String PROVISIONED_BYTES = COUNTERS + "/provisioned-bytes";
    public static final String CLIENT_IDS = ROOT + "/client-ids";
    public static final String TENANTS = ROOT + "/tenants";
    public static final String LEASES = ROOT + "/leases";
    public static final String NODE_ADMIN = ROOT + "/node-admin";
    public static final String DOWN = ROOT + "/down";
    public static final String FENCES = ROOT + "/fences";
    public static final String LAYERS = ROOT + "/layers";
    /** {@link SealedIds}: ids sealed for good whose layers were reclaimed (their fences/ znodes removed). */
    public static final String SEALED_IDS = ROOT + "/sealed-ids";
    public static final String RECLAIM = ROOT + "/reclaim";
    public static final String NAMENODE_LEADER = ROOT + "/namenodes/leader";

    private ZkPaths() {
    }

    public static String node(String nodeId) {
        return NODES + "/" + nodeId;
    }

    public static String live(String nodeId) {
        return LIVE + "/" + nodeId;
    }

    /** A storage server's heartbeat ({@link NodeLoad}), apart from its live znode so chain repair does not wake on it. */
    public static String load(String nodeId) {
        return LOAD + "/" + nodeId;
    }

    public static String group(int groupId) {
        return GROUPS + "/" + groupName(groupId);
    }

    /**
     * The group's znode name, its id zero-padded to 10 digits. Storage servers look a group up by
     * this name on every read and write, so it is built without {@code String.format} (which cost
     * about 1% of a storage server's CPU under 4 KiB reads).
     */
    public static String groupName(int groupId) {
        if (groupId < 0) {
            return String.format("%010d", groupId);
        }
        String digits = Integer.toString(groupId);
        return "0000000000".substring(Math.min(10, digits.length())) + digits;
    }

    /** Created by the joining node of a group once it holds everything the tail holds. */
    public static String caughtUp(int groupId, String nodeId) {
        return group(groupId) + "/caught-up/" + nodeId;
    }

    /** Optional progress report of a joining node's catch-up ({@link CatchUpProgress}). */
    public static String catchUpProgress(int groupId, String nodeId) {
        return group(groupId) + "/progress/" + nodeId;
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

    public static String exports(String volumeName) {
        return volume(volumeName) + "/exports";
    }

    /** The export of a volume to one initiator; the IQN is URL-encoded so any IQN is one znode name. */
    public static String export(String volumeName, String initiator) {
        return exports(volumeName) + "/" + java.net.URLEncoder.encode(initiator, java.nio.charset.StandardCharsets.UTF_8);
    }

    public static String initiatorOf(String exportChildName) {
        return java.net.URLDecoder.decode(exportChildName, java.nio.charset.StandardCharsets.UTF_8);
    }

    public static String snapshots(String volumeName) {
        return volume(volumeName) + "/snapshots";
    }

    public static String snapshot(String volumeName, String snapshotName) {
        return snapshots(volumeName) + "/" + snapshotName;
    }

    public static String layer(long layerId) {
        return LAYERS + "/" + layerId;
    }

    public static String layerChunkMap(long layerId) {
        return layer(layerId) + "/chunkmap";
    }

    public static String reclaim(long layerId) {
        return RECLAIM + "/" + layerId;
    }

    public static String clientId(String clientId) {
        return CLIENT_IDS + "/" + java.net.URLEncoder.encode(clientId, java.nio.charset.StandardCharsets.UTF_8);
    }

    public static String tenant(String name) {
        return TENANTS + "/" + name;
    }

    /** The write lease of a volume, by the numeric id storage servers see in requests. */
    public static String lease(long volumeId) {
        return LEASES + "/" + volumeId;
    }

    /** The lease-epoch floor storage servers enforce for a volume id (see {@link VolumeFences}). */
    public static String fence(long volumeId) {
        return FENCES + "/" + volumeId;
    }

    public static String nodeAdmin(String nodeId) {
        return NODE_ADMIN + "/" + nodeId;
    }

    /** The leader's record of a group member that lost its session ({@link DownRecord}). */
    public static String down(String nodeId) {
        return DOWN + "/" + nodeId;
    }
}
