package io.fastblock.namenode.api;

import io.fastblock.namenode.meta.ChunkMapStore;
import io.fastblock.namenode.meta.GroupStore;
import io.fastblock.namenode.meta.NodeStore;
import io.fastblock.namenode.meta.NodeStore.NodeState;
import io.fastblock.namenode.meta.VolumeExistsException;
import io.fastblock.namenode.meta.VolumeNotFoundException;
import io.fastblock.namenode.meta.VolumeStore;
import io.fastblock.namenode.placement.ChunkPlacement;
import io.fastblock.namenode.placement.NoReplicationGroupsException;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.VolumeRecord;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;

/** The v1 routes of the REST contract, wired to the metadata stores. */
public final class NameNodeApi {
    private final VolumeStore volumes;
    private final ChunkMapStore chunkMaps;
    private final GroupStore groups;
    private final NodeStore nodes;
    private final ChunkPlacement placement;
    private final long defaultChunkSize;

    public NameNodeApi(VolumeStore volumes, ChunkMapStore chunkMaps, GroupStore groups, NodeStore nodes,
                       ChunkPlacement placement, long defaultChunkSize) {
        this.volumes = volumes;
        this.chunkMaps = chunkMaps;
        this.groups = groups;
        this.nodes = nodes;
        this.placement = placement;
        this.defaultChunkSize = defaultChunkSize;
    }

    public Router router() {
        return new Router()
                .add("GET", "/v1/health", r -> ApiResponse.ok(new Views.Health("ok")))
                .add("GET", "/v1/status", guarded(r -> status()))
                .add("GET", "/v1/volumes", guarded(r -> listVolumes()))
                .add("POST", "/v1/volumes", guarded(this::createVolume))
                .add("GET", "/v1/volumes/{name}", guarded(r -> getVolume(r.param("name"))))
                .add("DELETE", "/v1/volumes/{name}", guarded(r -> deleteVolume(r.param("name"))))
                .add("GET", "/v1/volumes/{name}/chunks/{index}",
                        guarded(r -> chunk(r.param("name"), r.param("index"), false)))
                .add("POST", "/v1/volumes/{name}/chunks/{index}",
                        guarded(r -> chunk(r.param("name"), r.param("index"), true)))
                .add("GET", "/v1/nodes", guarded(r -> ApiResponse.ok(new Views.NodeList(Views.nodes(nodes.all())))))
                .add("GET", "/v1/groups", guarded(r -> ApiResponse.ok(new Views.GroupList(
                        Views.groups(groups.list(), nodes.all())))));
    }

    /** Maps the metadata layer's domain errors to the contract's codes. */
    private static Router.Handler guarded(Router.Handler h) {
        return request -> {
            try {
                return h.handle(request);
            } catch (VolumeNotFoundException e) {
                throw new ApiException(404, "VOLUME_NOT_FOUND", e.getMessage());
            } catch (VolumeExistsException e) {
                throw new ApiException(409, "VOLUME_EXISTS", e.getMessage());
            } catch (NoReplicationGroupsException e) {
                throw new ApiException(503, "NO_REPLICATION_GROUPS", e.getMessage());
            }
        };
    }

    private ApiResponse createVolume(ApiRequest r) {
        CreateVolumeRequest req = CreateVolumeRequest.parse(r.body(), defaultChunkSize);
        VolumeRecord v = volumes.create(req.name(), req.size(), req.chunkSize());
        return ApiResponse.created(Views.volume(v, 0));
    }

    private ApiResponse listVolumes() {
        List<Views.Volume> out = new ArrayList<>();
        for (VolumeRecord v : volumes.list()) {
            out.add(Views.volume(v, chunkMaps.allocatedCount(v.name())));
        }
        return ApiResponse.ok(new Views.VolumeList(out));
    }

    private ApiResponse getVolume(String name) {
        VolumeRecord v = existing(name);
        return ApiResponse.ok(Views.volume(v, chunkMaps.allocatedCount(name)));
    }

    private ApiResponse deleteVolume(String name) {
        if (!CreateVolumeRequest.validName(name) || !volumes.delete(name)) {
            throw new VolumeNotFoundException(name);
        }
        return ApiResponse.noContent();
    }

    private ApiResponse chunk(String name, String indexText, boolean allocate) {
        VolumeRecord v = existing(name);
        long index = chunkIndex(v, indexText);
        OptionalInt group;
        if (allocate) {
            group = OptionalInt.of(chunkMaps.allocate(name, index, () -> placement.groupFor(v.id(), index)));
        } else {
            group = chunkMaps.lookup(name, index);
        }
        if (group.isEmpty()) {
            return ApiResponse.ok(new Views.Chunk(index, false, null));
        }
        GroupRecord record = groups.list().stream().filter(g -> g.id() == group.getAsInt()).findFirst()
                .orElseThrow(() -> new IllegalStateException("chunk " + index + " of " + name
                        + " is mapped to group " + group.getAsInt() + ", which does not exist"));
        return ApiResponse.ok(new Views.Chunk(index, true, Views.group(record, nodes.all())));
    }

    private ApiResponse status() {
        Map<String, NodeState> all = nodes.all();
        List<VolumeRecord> vols = volumes.list();
        int allocated = 0;
        for (VolumeRecord v : vols) {
            allocated += chunkMaps.allocatedCount(v.name());
        }
        return ApiResponse.ok(new Views.Status(Views.nodes(all), Views.groups(groups.list(), all), vols.size(),
                allocated));
    }

    /** Names that cannot be valid are answered without asking ZooKeeper (and never reach a znode path). */
    private VolumeRecord existing(String name) {
        if (!CreateVolumeRequest.validName(name)) {
            throw new VolumeNotFoundException(name);
        }
        return volumes.require(name);
    }

    private static long chunkIndex(VolumeRecord v, String text) {
        long chunks = v.size() / v.chunkSize() + (v.size() % v.chunkSize() == 0 ? 0 : 1);
        long index;
        try {
            index = Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new ApiException(400, "INVALID_CHUNK_INDEX", "chunk index must be an integer, got '" + text + "'");
        }
        if (index < 0 || index >= chunks) {
            throw new ApiException(400, "INVALID_CHUNK_INDEX", "chunk index " + index + " out of range: volume '"
                    + v.name() + "' has " + chunks + " chunk(s), valid indexes are 0.." + (chunks - 1));
        }
        return index;
    }
}
