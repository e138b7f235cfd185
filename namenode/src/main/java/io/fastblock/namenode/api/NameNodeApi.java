package io.fastblock.namenode.api;

import com.fasterxml.jackson.databind.JsonNode;
import io.fastblock.namenode.capacity.Capacity;
import io.fastblock.namenode.capacity.InsufficientCapacityException;
import io.fastblock.namenode.meta.ChunkMapStore;
import io.fastblock.namenode.meta.DownStore;
import io.fastblock.namenode.meta.ExportStore;
import io.fastblock.namenode.meta.GroupStore;
import io.fastblock.namenode.layers.LayerSealer;
import io.fastblock.namenode.meta.IdempotencyConflictException;
import io.fastblock.namenode.meta.LayerConflictException;
import io.fastblock.namenode.meta.LayerStacks;
import io.fastblock.namenode.meta.SnapshotExistsException;
import io.fastblock.namenode.meta.SnapshotNotFoundException;
import io.fastblock.namenode.meta.SourceNotFoundException;
import io.fastblock.namenode.meta.StaleLayerException;
import io.fastblock.namenode.fencing.FenceIncompleteException;
import io.fastblock.namenode.fencing.LeaseFencing;
import io.fastblock.namenode.meta.LeaseLostException;
import io.fastblock.namenode.meta.LeaseRules;
import io.fastblock.namenode.meta.LeaseStore;
import io.fastblock.namenode.meta.NodeStore;
import io.fastblock.namenode.meta.NodeStore.NodeState;
import io.fastblock.namenode.meta.ProgressStore;
import io.fastblock.namenode.meta.TenantStore;
import io.fastblock.namenode.meta.VolumeEdits;
import io.fastblock.namenode.meta.VolumeExistsException;
import io.fastblock.namenode.meta.VolumeNotFoundException;
import io.fastblock.namenode.meta.VolumeStore;
import io.fastblock.namenode.placement.ChunkPlacement;
import io.fastblock.namenode.placement.InsufficientSpaceException;
import io.fastblock.namenode.placement.NoReplicationGroupsException;
import io.fastblock.protocol.Iqn;
import io.fastblock.protocol.meta.ExportRecord;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.LeaseRecord;
import io.fastblock.protocol.meta.NodeAdminRecord;
import io.fastblock.protocol.meta.QosSpec;
import io.fastblock.protocol.meta.TenantRecord;
import io.fastblock.protocol.meta.VolumeRecord;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.LongSupplier;

/** The v1 routes of the REST contract, wired to the metadata stores. */
public final class NameNodeApi {
    /** What the routes work on; any field may be null for a router that is only listed (contract test). */
    public record Services(VolumeStore volumes, ChunkMapStore chunkMaps, GroupStore groups, NodeStore nodes,
                           ExportStore exports, LeaseStore leases, TenantStore tenants, ProgressStore progress,
                           ChunkPlacement placement, LeaderView leadership, VolumeEdits edits,
                           LeaseFencing fencing, DownStore downs) {
    }

    /**
     * Tunables of the API: defaults for volumes, the thin-provisioning ratio, the lease duration, a clock,
     * and the down/out interval (shown in the status: when a down node's replacement starts).
     */
    public record Settings(long defaultChunkSize, double oversubscription, Duration leaseTtl, LongSupplier clockMillis,
                           Duration replaceAfter) {
        public static Settings defaults(long defaultChunkSize) {
            return new Settings(defaultChunkSize, 4.0, Duration.ofSeconds(15), System::currentTimeMillis,
                    Duration.ofMillis(io.fastblock.namenode.NameNodeConfig.DEFAULT_REPLACE_AFTER_MS));
        }
    }

    private final Services s;
    private final Settings settings;
    private final SnapshotRoutes snapshots;

    /** Without the snapshot routes' stores: for routers that are only listed (contract test). */
    public NameNodeApi(Services services, Settings settings) {
        this(services, settings, null, LayerSealer.ZOOKEEPER_ONLY);
    }

    /**
     * {@code layers} changes layer stacks (snapshots, clones, reverts, extend); {@code sealer}
     * confirms the seal of a layer with the storage servers before those answer.
     */
    public NameNodeApi(Services services, Settings settings, LayerStacks layers, LayerSealer sealer) {
        this.s = services;
        this.settings = settings;
        this.snapshots = new SnapshotRoutes(services, layers, sealer, this::admit);
    }

    public Router router() {
        Router router = new Router()
                .add("GET", "/v1/health", r -> ApiResponse.ok(new Views.Health("ok")))
                .add("GET", "/v1/status", guarded(r -> status()))
                .add("GET", "/v1/volumes", guarded(r -> listVolumes()))
                .add("POST", "/v1/volumes", guarded(this::createVolume))
                .add("GET", "/v1/volumes/{name}", guarded(r -> getVolume(r.param("name"))))
                .add("DELETE", "/v1/volumes/{name}", guarded(r -> deleteVolume(r.param("name"))))
                .add("PATCH", "/v1/volumes/{name}", guarded(this::patchVolume))
                .add("GET", "/v1/volumes/{name}/chunks/{index}",
                        guarded(r -> chunk(r.param("name"), r.param("index"), false, r.query("layer"))))
                .add("POST", "/v1/volumes/{name}/chunks/{index}",
                        guarded(r -> chunk(r.param("name"), r.param("index"), true, r.query("layer"))))
                .add("GET", "/v1/volumes/{name}/exports", guarded(r -> listExports(r.param("name"))))
                .add("POST", "/v1/volumes/{name}/exports", guarded(this::createExport))
                .add("DELETE", "/v1/volumes/{name}/exports/{initiator}",
                        guarded(r -> deleteExport(r.param("name"), r.param("initiator"))))
                .add("POST", "/v1/volumes/{name}/lease", guarded(this::lease))
                .add("GET", "/v1/volumes/{name}/lease", guarded(r -> currentLease(r.param("name"))))
                .add("GET", "/v1/gateway/access", guarded(this::access))
                .add("GET", "/v1/nodes", guarded(r -> ApiResponse.ok(new Views.NodeList(Views.nodes(s.nodes().all())))))
                .add("POST", "/v1/nodes/{id}/drain", guarded(r -> drain(r.param("id"))))
                .add("GET", "/v1/groups", guarded(r -> ApiResponse.ok(new Views.GroupList(groupViews(s.nodes().all())))))
                .add("GET", "/v1/tenants", guarded(r -> ApiResponse.ok(new Views.TenantList(s.tenants().list()))))
                .add("PUT", "/v1/tenants/{name}", guarded(this::putTenant));
        snapshots.addTo(router, NameNodeApi::guarded);
        return router;
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
            } catch (IdempotencyConflictException e) {
                throw new ApiException(409, "IDEMPOTENCY_CONFLICT", e.getMessage());
            } catch (LeaseLostException e) {
                throw new ApiException(409, "LEASE_LOST", e.getMessage());
            } catch (NoReplicationGroupsException e) {
                throw new ApiException(503, "NO_REPLICATION_GROUPS", e.getMessage());
            } catch (SnapshotNotFoundException e) {
                throw new ApiException(404, "SNAPSHOT_NOT_FOUND", e.getMessage());
            } catch (SnapshotExistsException e) {
                throw new ApiException(409, "SNAPSHOT_EXISTS", e.getMessage());
            } catch (SourceNotFoundException e) {
                throw new ApiException(404, "SOURCE_NOT_FOUND", e.getMessage());
            } catch (LayerConflictException e) {
                throw new ApiException(409, e.code(), e.getMessage());
            } catch (StaleLayerException e) {
                throw new ApiException(409, "STALE_LAYER", e.getMessage());
            } catch (LayerSealer.SealIncompleteException e) {
                throw new ApiException(503, "SEAL_INCOMPLETE", e.getMessage());
            } catch (InsufficientSpaceException e) {
                throw new ApiException(507, "INSUFFICIENT_SPACE", e.getMessage());
            } catch (InsufficientCapacityException e) {
                throw new ApiException(507, "INSUFFICIENT_CAPACITY", e.getMessage());
            } catch (FenceIncompleteException e) {
                throw new ApiException(503, "FENCE_INCOMPLETE", e.getMessage());
            }
        };
    }

    private ApiResponse createVolume(ApiRequest r) {
        if (SnapshotRoutes.hasSource(r.body())) {
            return snapshots.createClone(r);
        }
        CreateVolumeRequest req = CreateVolumeRequest.parse(r.body(), settings.defaultChunkSize());
        VolumeStore.NewVolume wanted = new VolumeStore.NewVolume(req.name(), req.size(), req.chunkSize(), req.tenant(),
                req.qos(), req.clientId());
        // A repeat of an earlier create is answered even when the cluster has filled up since: the store
        // asks the guard only when it really creates.
        VolumeStore.Created created = s.volumes().create(wanted, this::admit);
        Views.Volume view = Views.volume(created.volume(), created.created() ? 0
                : s.chunkMaps().allocatedCount(created.volume().name()));
        return created.created() ? ApiResponse.created(view) : ApiResponse.ok(view);
    }

    /**
     * The thin-provisioning limit, asked by the stores with the provisioned total they read in the
     * step that raises it (O(nodes): the total is a counter, not a sum over the volumes).
     */
    private void admit(long provisioned, long more) {
        capacity(s.nodes().all(), provisioned, 0).require(more);
    }

    private ApiResponse listVolumes() {
        List<Views.Volume> out = new ArrayList<>();
        for (VolumeRecord v : s.volumes().list()) {
            out.add(Views.volume(v, s.chunkMaps().allocatedCount(v.name())));
        }
        return ApiResponse.ok(new Views.VolumeList(out));
    }

    private ApiResponse getVolume(String name) {
        VolumeRecord v = existing(name);
        return ApiResponse.ok(Views.volume(v, s.chunkMaps().allocatedCount(name)));
    }

    private ApiResponse deleteVolume(String name) {
        Optional<VolumeRecord> v = CreateVolumeRequest.validName(name) ? s.volumes().get(name) : Optional.empty();
        if (v.isEmpty() || !s.volumes().delete(name)) {
            throw new VolumeNotFoundException(name);
        }
        s.leases().delete(v.get().id());
        return ApiResponse.noContent();
    }

    /**
     * Renames a volume and/or changes its QoS limits; no data moves. QoS is applied first, so a
     * request doing both that fails on the rename (name taken, volume attached) has still changed
     * nothing but the limits, and repeating it is harmless. A rename is refused while a gateway
     * holds a live write lease: the target IQN derives from the name, so an initiator logged in to
     * the old IQN would otherwise keep writing a volume that no longer answers to it.
     */
    private ApiResponse patchVolume(ApiRequest r) {
        String name = r.param("name");
        VolumeRecord v = existing(name);
        JsonNode root = CreateVolumeRequest.parseJson(r.body());
        root.fieldNames().forEachRemaining(f -> {
            if (!f.equals("name") && !f.equals("qos")) {
                throw new ApiException(400, "INVALID_FIELD", "field '" + f + "' cannot be changed; a PATCH may set"
                        + " 'name' and 'qos'");
            }
        });
        JsonNode n = root.get("name");
        String newName = null;
        if (n != null && !n.isNull()) {
            if (!n.isTextual() || !CreateVolumeRequest.validName(n.textValue())) {
                throw new ApiException(400, "INVALID_NAME", "name " + n + " is invalid: 1 to 63 characters of a-z,"
                        + " 0-9, '.' and '-', starting with a letter or digit");
            }
            newName = n.textValue().equals(name) ? null : n.textValue();
        }
        JsonNode q = root.get("qos");
        QosSpec qos = q == null || q.isNull() ? null : CreateVolumeRequest.qos(q);
        if (newName != null) {
            if (s.volumes().get(newName).isPresent()) {
                throw new VolumeExistsException(newName);
            }
            long now = settings.clockMillis().getAsLong();
            Optional<LeaseRecord> lease = s.leases().get(v.id()).filter(l -> !l.expired(now));
            if (lease.isPresent()) {
                throw new ApiException(409, "VOLUME_ATTACHED", "volume '" + name + "' cannot be renamed while gateway '"
                        + lease.get().holder() + "' holds its write lease (until "
                        + java.time.Instant.ofEpochMilli(lease.get().expiresAtMillis()) + "); detach it first");
            }
        }
        if (qos != null && !qos.equals(v.qos())) {
            v = s.edits().setQos(name, qos);
        }
        if (newName != null) {
            v = s.edits().rename(name, newName);
        }
        return ApiResponse.ok(Views.volume(v, s.chunkMaps().allocatedCount(v.name())));
    }

    /**
     * A chunk of the volume's top layer, or (GET with {@code layer}) of that layer of its stack; a
     * POST with {@code layer} allocates only while that layer is still the top (else 409 STALE_LAYER).
     */
    private ApiResponse chunk(String name, String indexText, boolean allocate, String layerText) {
        VolumeRecord v = existing(name);
        long index = chunkIndex(v, indexText);
        Long layer = SnapshotRoutes.layerOf(v, layerText);
        OptionalInt group;
        if (allocate) {
            group = OptionalInt.of(s.chunkMaps().allocate(name, layer, index, s.placement().chooser(v.id(), index)));
        } else {
            // The volume record just read names the top layer: no second read of it.
            group = s.chunkMaps().lookupIn(ChunkMapStore.mapPath(v, layer != null ? layer : v.topLayer()), index);
        }
        if (group.isEmpty()) {
            return ApiResponse.ok(new Views.Chunk(index, false, null));
        }
        GroupRecord record = s.groups().get(group.getAsInt()).map(g -> g.group())
                .orElseThrow(() -> new IllegalStateException("chunk " + index + " of " + name
                        + " is mapped to group " + group.getAsInt() + ", which does not exist"));
        List<String> ids = new ArrayList<>(record.members());
        if (record.joining() != null) {
            ids.add(record.joining());
        }
        return ApiResponse.ok(new Views.Chunk(index, true, Views.group(record, s.nodes().routing(ids))));
    }

    private ApiResponse listExports(String name) {
        existing(name);
        return ApiResponse.ok(new Views.ExportList(s.exports().list(name).stream().map(Views::export).toList()));
    }

    private ApiResponse createExport(ApiRequest r) {
        String name = r.param("name");
        existing(name);
        ExportRecord wanted = ExportRequest.parse(name, r.body());
        ExportStore.Put put = s.exports().putIfAbsent(wanted);
        Views.Export view = Views.export(put.export());
        return put.created() ? ApiResponse.created(view) : ApiResponse.ok(view);
    }

    private ApiResponse deleteExport(String name, String initiator) {
        existing(name);
        if (!ExportRequest.validInitiator(initiator) || !s.exports().delete(name, initiator)) {
            throw new ApiException(404, "EXPORT_NOT_FOUND", "volume '" + name + "' has no export to '" + initiator + "'");
        }
        return ApiResponse.noContent();
    }

    /**
     * Whether an initiator may log in to a target, and with which CHAP credentials. Its own export
     * wins over an open ("*") one, so a volume can be open and still have per-host secrets.
     */
    private ApiResponse access(ApiRequest r) {
        String target = r.query("target");
        String initiator = r.query("initiator");
        if (target == null || target.isEmpty() || initiator == null || initiator.isEmpty()) {
            throw new ApiException(400, "BAD_REQUEST", "query parameters 'target' and 'initiator' are required");
        }
        String volume = Iqn.volumeOf(target);
        if (volume == null || !CreateVolumeRequest.validName(volume) || s.volumes().get(volume).isEmpty()) {
            return ApiResponse.ok(new Views.Access(false, target, initiator, null, null, "no such target"));
        }
        Optional<ExportRecord> export = ExportRequest.validInitiator(initiator) && !"*".equals(initiator)
                ? s.exports().get(volume, initiator) : Optional.empty();
        if (export.isEmpty()) {
            export = s.exports().get(volume, ExportRecord.ANY_INITIATOR);
        }
        if (export.isEmpty()) {
            return ApiResponse.ok(new Views.Access(false, target, initiator, volume, null,
                    "volume '" + volume + "' is not exported to " + initiator));
        }
        Views.Export view = Views.export(export.get());
        return ApiResponse.ok(new Views.Access(true, target, initiator, volume, view.chap(),
                "export to " + export.get().initiator()));
    }

    private ApiResponse lease(ApiRequest r) {
        VolumeRecord v = existing(r.param("name"));
        JsonNode root = CreateVolumeRequest.parseJson(r.body());
        String gateway = CreateVolumeRequest.token(root.get("gateway"), "gateway", "INVALID_GATEWAY");
        if (gateway == null) {
            throw new ApiException(400, "INVALID_GATEWAY", "gateway (the asking gateway's id) is required");
        }
        JsonNode e = root.get("epoch");
        Long renew = null;
        if (e != null && !e.isNull()) {
            if (!e.isIntegralNumber() || !e.canConvertToLong() || e.longValue() < 1) {
                throw new ApiException(400, "INVALID_EPOCH", "epoch must be a whole number >= 1, got " + e);
            }
            renew = e.longValue();
        }
        long ttl = settings.leaseTtl().toMillis();
        LeaseRecord lease = s.leases().acquire(v.id(), v.name(), gateway, ttl, settings.clockMillis().getAsLong(),
                renew);
        if (renew == null && lease.epoch() > LeaseRules.FIRST_EPOCH) {
            // The lease moved (or its holder asks again after a failed fence): no older epoch may write
            // anywhere before the holder hears it holds the lease. The id fenced is the one writes carry,
            // read after the lease changed: a snapshot committed later carries the new epoch to its new top.
            s.fencing().fence(existing(v.name()).topLayer(), lease.epoch());
        }
        return ApiResponse.ok(Views.lease(lease, ttl));
    }

    /** The lease as it stands, without taking it: epoch 0 and no holder when none was ever taken. */
    private ApiResponse currentLease(String name) {
        VolumeRecord v = existing(name);
        long ttl = settings.leaseTtl().toMillis();
        return ApiResponse.ok(s.leases().get(v.id()).map(l -> Views.lease(l, ttl))
                .orElse(new Views.Lease(v.name(), v.id(), null, 0, null, ttl)));
    }

    private ApiResponse drain(String id) {
        NodeState node = s.nodes().all().get(id);
        if (node == null) {
            throw new ApiException(404, "NODE_NOT_FOUND", "no storage node '" + id + "' is registered");
        }
        if (!NodeAdminRecord.DECOMMISSIONED.equals(node.state())) {
            s.nodes().setAdminState(id, NodeAdminRecord.DRAINING);
        }
        return new ApiResponse(202, Views.node(s.nodes().all().get(id)));
    }

    private ApiResponse putTenant(ApiRequest r) {
        String name = r.param("name");
        if (!CreateVolumeRequest.TOKEN.matcher(name).matches()) {
            throw new ApiException(400, "INVALID_TENANT", "tenant names are 1 to 128 characters of letters, digits,"
                    + " '.', '_', ':' and '-'");
        }
        JsonNode w = CreateVolumeRequest.parseJson(r.body()).get("weight");
        if (w == null || !w.isIntegralNumber() || !w.canConvertToInt() || w.intValue() < 1 || w.intValue() > 10_000) {
            throw new ApiException(400, "INVALID_WEIGHT", "weight must be a whole number from 1 to 10000, got " + w);
        }
        return ApiResponse.ok(s.tenants().put(new TenantRecord(name, w.intValue())));
    }

    private List<Views.Group> groupViews(Map<String, NodeState> nodes) {
        return s.groups().list().stream().map(g -> Views.group(g, nodes, s.progress()::get)).toList();
    }

    private ApiResponse status() {
        Map<String, NodeState> all = s.nodes().all();
        List<VolumeRecord> vols = s.volumes().list();
        int allocated = 0;
        for (VolumeRecord v : vols) {
            allocated += s.chunkMaps().allocatedCount(v.name());
        }
        List<Views.Group> groups = groupViews(all);
        int degraded = (int) groups.stream().filter(Views.Group::degraded).count();
        LeaderView leader = s.leadership();
        return ApiResponse.ok(new Views.Status(Views.nodes(all), groups, vols.size(), allocated, capacity(all, vols),
                degraded, new Views.Leadership(leader.isLeader(), leader.leaderUrl().orElse(null)),
                Views.down(s.downs().all(), all, settings.replaceAfter(), settings.clockMillis().getAsLong())));
    }

    /** Capacity figures for the status: provisioned from its counter, allocated from every chunk map. */
    private Capacity capacity(Map<String, NodeState> nodes, List<VolumeRecord> vols) {
        long allocatedBytes = 0;
        for (VolumeRecord v : vols) {
            allocatedBytes += Math.min(v.size(), (long) s.chunkMaps().allocatedCount(v.name()) * v.chunkSize());
        }
        return capacity(nodes, s.volumes().provisionedBytes(), allocatedBytes);
    }

    private Capacity capacity(Map<String, NodeState> nodes, long provisioned, long allocatedBytes) {
        long raw = 0;
        for (NodeState n : nodes.values()) {
            if (!NodeAdminRecord.DECOMMISSIONED.equals(n.state())) {
                raw += Math.max(0, n.record().capacityBytes());
            }
        }
        return Capacity.of(raw, provisioned, allocatedBytes, settings.oversubscription());
    }

    /** Names that cannot be valid are answered without asking ZooKeeper (and never reach a znode path). */
    private VolumeRecord existing(String name) {
        if (!CreateVolumeRequest.validName(name)) {
            throw new VolumeNotFoundException(name);
        }
        return s.volumes().require(name);
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
