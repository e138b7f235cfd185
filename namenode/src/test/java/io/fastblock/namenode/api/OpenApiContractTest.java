package io.fastblock.namenode.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** docs/api/openapi.yaml describes exactly the routes the router serves, so neither can drift from the other. */
class OpenApiContractTest {
    private static final Set<String> HTTP_METHODS = Set.of("get", "put", "post", "delete", "patch", "head", "options",
            "trace");
    private static final Path SPEC = Path.of("..", "docs", "api", "openapi.yaml");

    private static JsonNode spec() throws Exception {
        assertTrue(Files.isRegularFile(SPEC), "missing " + SPEC.toAbsolutePath());
        return new ObjectMapper(new YAMLFactory()).readTree(SPEC.toFile());
    }

    private static Set<String> documentedRoutes(JsonNode spec) {
        Set<String> routes = new TreeSet<>();
        Iterator<Map.Entry<String, JsonNode>> paths = spec.get("paths").fields();
        while (paths.hasNext()) {
            Map.Entry<String, JsonNode> path = paths.next();
            path.getValue().fieldNames().forEachRemaining(key -> {
                if (HTTP_METHODS.contains(key)) {
                    routes.add(key.toUpperCase() + " " + path.getKey());
                }
            });
        }
        return routes;
    }

    private static Set<String> servedRoutes() {
        // Handlers are never invoked here, so the router can be built without stores.
        Router router = new NameNodeApi(new NameNodeApi.Services(null, null, null, null, null, null, null, null, null, null, null, null, null),
                NameNodeApi.Settings.defaults(ChunkSizes.DEFAULT)).router();
        Set<String> routes = new TreeSet<>();
        for (Router.Route r : router.routes()) {
            routes.add(r.method() + " " + r.pattern());
        }
        return routes;
    }

    @Test
    void documentsExactlyTheServedRoutes() throws Exception {
        assertEquals(servedRoutes(), documentedRoutes(spec()));
    }

    @Test
    void isOpenApi3WithResponsesAndErrorCodesForEveryOperation() throws Exception {
        JsonNode spec = spec();
        assertTrue(spec.get("openapi").asText().startsWith("3.0"), "openapi version");
        assertNotNull(spec.at("/components/schemas/Error").get("properties"));
        Set<String> refs = new HashSet<>();
        collectRefs(spec, refs);
        for (String ref : refs) {
            assertTrue(ref.startsWith("#/"), ref);
            assertFalse(spec.at(ref.substring(1)).isMissingNode(), "dangling $ref " + ref);
        }
        spec.get("paths").fields().forEachRemaining(path -> path.getValue().fields().forEachRemaining(op -> {
            if (HTTP_METHODS.contains(op.getKey())) {
                JsonNode responses = op.getValue().get("responses");
                assertNotNull(responses, op.getKey() + " " + path.getKey() + " has no responses");
                assertTrue(responses.size() > 0);
                assertNotNull(op.getValue().get("operationId"), op.getKey() + " " + path.getKey());
            }
        }));
        // Every error code the API can answer is listed in the Error schema's enum.
        Set<String> codes = new HashSet<>();
        spec.at("/components/schemas/Error/properties/code/enum").forEach(c -> codes.add(c.asText()));
        assertEquals(Set.of("NOT_FOUND", "METHOD_NOT_ALLOWED", "PAYLOAD_TOO_LARGE", "BAD_REQUEST", "MALFORMED_JSON",
                "INVALID_NAME", "INVALID_SIZE", "INVALID_CHUNK_SIZE", "INVALID_CHUNK_INDEX", "VOLUME_EXISTS",
                "VOLUME_NOT_FOUND", "NO_REPLICATION_GROUPS", "METADATA_UNAVAILABLE", "INTERNAL_ERROR", "UNAUTHORIZED",
                "NOT_LEADER", "INVALID_TENANT", "INVALID_QOS", "INVALID_ID", "IDEMPOTENCY_CONFLICT",
                "INSUFFICIENT_CAPACITY", "INVALID_INITIATOR", "INVALID_HOST", "INVALID_CHAP", "EXPORT_NOT_FOUND",
                "INVALID_GATEWAY", "INVALID_EPOCH", "LEASE_LOST", "NODE_NOT_FOUND", "INVALID_WEIGHT", "INVALID_FIELD",
                "VOLUME_ATTACHED", "INVALID_SOURCE", "INVALID_SNAPSHOT", "INVALID_LAYER", "SNAPSHOT_EXISTS",
                "SNAPSHOT_NOT_FOUND", "SOURCE_NOT_FOUND", "NOT_LATEST_SNAPSHOT", "VOLUME_HAS_SNAPSHOTS", "STALE_LAYER",
                "SEAL_INCOMPLETE"), codes);
    }

    private static void collectRefs(JsonNode n, Set<String> refs) {
        if (n.isObject()) {
            n.fields().forEachRemaining(e -> {
                if (e.getKey().equals("$ref")) {
                    refs.add(e.getValue().asText());
                } else {
                    collectRefs(e.getValue(), refs);
                }
            });
        } else if (n.isArray()) {
            n.forEach(c -> collectRefs(c, refs));
        }
    }
}
