package io.fastblock.namenode.api;

import io.fastblock.namenode.capacity.ProvisionGuard;
import com.fasterxml.jackson.databind.JsonNode;
import io.fastblock.namenode.layers.LayerSealer;
import io.fastblock.namenode.meta.LayerStacks;
import io.fastblock.namenode.meta.SnapshotNotFoundException;
import io.fastblock.namenode.meta.VolumeNotFoundException;
import io.fastblock.namenode.meta.VolumeStore;
import io.fastblock.protocol.meta.SnapshotRecord;
import io.fastblock.protocol.meta.VolumeRecord;
import io.fastblock.protocol.meta.VolumeSource;
import java.io.IOException;
import java.util.function.UnaryOperator;

/**
 * The routes of contract B (docs/snapshots.md): snapshots, clones ({@code POST /v1/volumes} with a
 * {@code source}), revert and extend. Every change of a layer stack is one ZooKeeper transaction
 * ({@link LayerStacks}); a change that seals a layer answers only after the storage servers
 * confirmed the seal, so no write acknowledged after the answer lands in the sealed layer.
 */
final class SnapshotRoutes {
    private final NameNodeApi.Services s;
    private final LayerStacks layers;
    private final LayerSealer sealer;
    private final ProvisionGuard capacity;

    SnapshotRoutes(NameNodeApi.Services services, LayerStacks layers, LayerSealer sealer, ProvisionGuard capacity) {
        this.s = services;
        this.layers = layers;
        this.sealer = sealer;
        this.capacity = capacity;
    }

    void addTo(Router router, UnaryOperator<Router.Handler> guarded) {
        router.add("POST", "/v1/volumes/{name}/snapshots", guarded.apply(this::createSnapshot))
                .add("GET", "/v1/volumes/{name}/snapshots", guarded.apply(r -> listSnapshots(r.param("name"))))
                .add("GET", "/v1/volumes/{name}/snapshots/{snapshot}",
                        guarded.apply(r -> getSnapshot(r.param("name"), r.param("snapshot"))))
                .add("DELETE", "/v1/volumes/{name}/snapshots/{snapshot}",
                        guarded.apply(r -> deleteSnapshot(r.param("name"), r.param("snapshot"))))
                .add("POST", "/v1/volumes/{name}/revert", guarded.apply(this::revert))
                .add("POST", "/v1/volumes/{name}/extend", guarded.apply(this::extend));
    }

    /** Whether a create body asks for a clone (has a {@code source}); a body that is not JSON is left to the parser. */
    static boolean hasSource(byte[] body) {
        try {
            JsonNode root = body.length == 0 ? null : HttpApi.JSON.readTree(body);
            return root != null && root.isObject() && root.has("source") && !root.get("source").isNull();
        } catch (IOException e) {
            return false;
        }
    }

    /** The {@code layer} query parameter, checked to be a layer of the volume's stack; null when absent. */
    static Long layerOf(VolumeRecord v, String text) {
        if (text == null) {
            return null;
        }
        try {
            long layer = Long.parseLong(text);
            if (v.layerStack().contains(layer)) {
                return layer;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new ApiException(400, "INVALID_LAYER", "layer '" + text + "' is not a layer of volume '" + v.name()
                + "'; its layers are " + v.layerStack());
    }

    private ApiResponse createSnapshot(ApiRequest r) {
        String volume = existingName(r.param("name"));
        JsonNode root = CreateVolumeRequest.parseJson(r.body());
        String name = snapshotName(root.get("name"));
        String clientId = CreateVolumeRequest.token(root.get("id"), "id", "INVALID_ID");
        LayerStacks.Snapshotted made = layers.createSnapshot(volume, name, clientId);
        // A repeat seals again: the first call may have died between the transaction and the fence.
        sealer.seal(made.sealedLayer());
        Views.Snapshot view = Views.snapshot(made.snapshot());
        return made.created() ? ApiResponse.created(view) : ApiResponse.ok(view);
    }

    private ApiResponse listSnapshots(String volume) {
        existingName(volume);
        return ApiResponse.ok(new Views.SnapshotList(layers.snapshots(volume).stream().map(Views::snapshot).toList()));
    }

    private ApiResponse getSnapshot(String volume, String name) {
        existingName(volume);
        if (!CreateVolumeRequest.validName(name)) {
            throw new SnapshotNotFoundException(volume, name);
        }
        SnapshotRecord snap = layers.snapshot(volume, name).orElseThrow(() -> new SnapshotNotFoundException(volume, name));
        return ApiResponse.ok(Views.snapshot(snap));
    }

    private ApiResponse deleteSnapshot(String volume, String name) {
        existingName(volume);
        if (!CreateVolumeRequest.validName(name)) {
            throw new SnapshotNotFoundException(volume, name);
        }
        layers.deleteSnapshot(volume, name);
        return ApiResponse.noContent();
    }

    private ApiResponse revert(ApiRequest r) {
        String volume = existingName(r.param("name"));
        JsonNode root = CreateVolumeRequest.parseJson(r.body());
        JsonNode snap = root.get("snapshot");
        if (snap == null || !snap.isTextual() || !CreateVolumeRequest.validName(snap.textValue())) {
            throw new ApiException(400, "INVALID_SNAPSHOT", "snapshot (the name of the volume's latest snapshot) is"
                    + " required, got " + snap);
        }
        LayerStacks.Changed changed = layers.revert(volume, snap.textValue());
        sealer.seal(changed.sealedLayer());
        return ApiResponse.ok(Views.volume(changed.volume(), s.chunkMaps().allocatedCount(volume)));
    }

    private ApiResponse extend(ApiRequest r) {
        String volume = existingName(r.param("name"));
        JsonNode root = CreateVolumeRequest.parseJson(r.body());
        long size = CreateVolumeRequest.sizeField(root.get("size"));
        VolumeRecord v = s.volumes().require(volume);
        if (size <= v.size()) {
            throw new ApiException(400, "INVALID_SIZE", "volume '" + volume + "' is " + v.size()
                    + " bytes; extend needs a larger size, got " + size);
        }
        VolumeRecord after;
        try {
            after = layers.extend(volume, size, capacity);
        } catch (IllegalArgumentException e) {
            throw new ApiException(400, "INVALID_SIZE", e.getMessage());
        }
        return ApiResponse.ok(Views.volume(after, s.chunkMaps().allocatedCount(volume)));
    }

    /** {@code POST /v1/volumes} with a {@code source}: an instant clone sharing the source's data. */
    ApiResponse createClone(ApiRequest r) {
        JsonNode root = CreateVolumeRequest.parseJson(r.body());
        VolumeSource source = source(root.get("source"));
        JsonNode sizeNode = root.get("size");
        long size = sizeNode == null || sizeNode.isNull() ? 0 : CreateVolumeRequest.sizeField(sizeNode);
        CreateVolumeRequest base = CreateVolumeRequest.parse(withSize(root, size), 1);
        if (root.has("chunkSize") && !root.get("chunkSize").isNull()) {
            throw new ApiException(400, "INVALID_CHUNK_SIZE", "a clone has its source's chunk size; leave chunkSize out");
        }
        VolumeStore.NewVolume wanted = new VolumeStore.NewVolume(base.name(), size, 0, base.tenant(), base.qos(),
                base.clientId());
        if (base.clientId() == null || s.volumes().get(base.name())
                .filter(v -> base.clientId().equals(v.clientId())).isEmpty()) {
            long sourceSize = sourceSize(source);
            if (size != 0 && size < sourceSize) {
                throw new ApiException(400, "INVALID_SIZE", "a clone must be at least as large as its source ("
                        + sourceSize + " bytes), got " + size);
            }
        }
        LayerStacks.Changed made;
        try {
            made = layers.createClone(wanted, source, capacity);
        } catch (IllegalArgumentException e) {
            throw new ApiException(400, "INVALID_SIZE", e.getMessage());
        }
        if (made.sealedLayer() >= 0) {
            sealer.seal(made.sealedLayer());
        }
        Views.Volume view = Views.volume(made.volume(), s.chunkMaps().allocatedCount(made.volume().name()));
        return made.created() ? ApiResponse.created(view) : ApiResponse.ok(view);
    }

    private long sourceSize(VolumeSource source) {
        if (source.snapshot() == null) {
            return s.volumes().get(source.volume()).map(VolumeRecord::size).orElseThrow(() ->
                    new ApiException(404, "SOURCE_NOT_FOUND", "volume '" + source.volume() + "' does not exist"));
        }
        if (s.volumes().get(source.volume()).isEmpty()) {
            throw new ApiException(404, "SOURCE_NOT_FOUND", "volume '" + source.volume() + "' does not exist");
        }
        return layers.snapshot(source.volume(), source.snapshot()).map(SnapshotRecord::size).orElseThrow(() ->
                new ApiException(404, "SOURCE_NOT_FOUND", "snapshot '" + source.volume() + "/" + source.snapshot()
                        + "' does not exist"));
    }

    /** The create body with a placeholder size, so the usual parser checks the other fields. */
    private static byte[] withSize(JsonNode root, long size) {
        com.fasterxml.jackson.databind.node.ObjectNode copy = ((com.fasterxml.jackson.databind.node.ObjectNode) root)
                .deepCopy();
        copy.remove("source");
        copy.put("size", size == 0 ? 1L << 30 : size);
        try {
            return HttpApi.JSON.writeValueAsBytes(copy);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static VolumeSource source(JsonNode n) {
        if (n == null || !n.isObject()) {
            throw invalidSource("source must be {\"snapshot\": \"<volume>/<snapshot>\"} or {\"volume\": \"<name>\"}, got "
                    + n);
        }
        JsonNode snap = n.get("snapshot");
        JsonNode vol = n.get("volume");
        if ((snap == null) == (vol == null) || n.size() != 1) {
            throw invalidSource("source needs exactly one of 'snapshot' or 'volume', got " + n);
        }
        if (vol != null) {
            if (!vol.isTextual() || !CreateVolumeRequest.validName(vol.textValue())) {
                throw new ApiException(404, "SOURCE_NOT_FOUND", "volume " + vol + " does not exist");
            }
            return new VolumeSource(vol.textValue(), null);
        }
        String text = snap.isTextual() ? snap.textValue() : "";
        int slash = text.indexOf('/');
        if (slash < 0) {
            throw invalidSource("source.snapshot must be \"<volume>/<snapshot>\", got " + snap);
        }
        String volume = text.substring(0, slash);
        String name = text.substring(slash + 1);
        if (!CreateVolumeRequest.validName(volume) || !CreateVolumeRequest.validName(name)) {
            throw new ApiException(404, "SOURCE_NOT_FOUND", "snapshot '" + text + "' does not exist");
        }
        return new VolumeSource(volume, name);
    }

    private static ApiException invalidSource(String message) {
        return new ApiException(400, "INVALID_SOURCE", message);
    }

    private static String snapshotName(JsonNode n) {
        if (n == null || !n.isTextual() || !CreateVolumeRequest.validName(n.textValue())) {
            throw new ApiException(400, "INVALID_NAME", "snapshot name " + n + " is invalid: 1 to 63 characters of"
                    + " a-z, 0-9, '.' and '-', starting with a letter or digit");
        }
        return n.textValue();
    }

    private String existingName(String volume) {
        if (!CreateVolumeRequest.validName(volume) || s.volumes().get(volume).isEmpty()) {
            throw new VolumeNotFoundException(volume);
        }
        return volume;
    }
}
