package io.fastblock.namenode.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.fastblock.namenode.NameNode;
import io.fastblock.namenode.NameNodeConfig;
import io.fastblock.namenode.TestHttp;
import io.fastblock.namenode.TestHttp.Reply;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Contract B (snapshots, clones, revert, extend) over real HTTP against a namenode on a real ZooKeeper. */
class SnapshotApiTest {
    private static final long GIB = 1L << 30;

    @TempDir
    Path dir;
    private TestingServer zkServer;
    private NameNode namenode;
    private TestHttp http;

    @BeforeEach
    void start() throws Exception {
        zkServer = new TestingServer(true);
        namenode = NameNode.start(NameNodeConfig.fromArgs("--data-dir=" + dir, "--http-port=0",
                "--zk=" + zkServer.getConnectString(), "--oversubscription=0", "--chunk-size=1M"));
        http = new TestHttp(namenode.baseUrl());
        assertEquals(201, http.post("/v1/volumes", "{\"name\":\"vol1\",\"size\":\"1G\"}").status());
    }

    @AfterEach
    void stop() throws Exception {
        namenode.close();
        zkServer.close();
    }

    private static void assertError(Reply r, int status, String code) {
        assertEquals(status, r.status(), r.toString());
        assertEquals(code, r.code(), r.toString());
        assertFalse(r.json().get("message").asText().isBlank(), r.toString());
    }

    private static List<Long> layers(JsonNode volume) {
        List<Long> out = new ArrayList<>();
        volume.get("layers").forEach(n -> out.add(n.asLong()));
        return out;
    }

    @Test
    void createListGetDeleteSnapshots() throws Exception {
        JsonNode before = http.get("/v1/volumes/vol1").json();
        assertEquals(List.of(before.get("id").asLong()), layers(before));
        assertTrue(before.get("source").isNull());

        Reply made = http.post("/v1/volumes/vol1/snapshots", "{\"name\":\"s1\",\"id\":\"snap-uuid-1\"}");
        assertEquals(201, made.status(), made.toString());
        JsonNode s = made.json();
        assertEquals(List.of("name", "volume", "id", "size", "createdAt", "state"), fieldNames(s));
        assertEquals("s1", s.get("name").asText());
        assertEquals("vol1", s.get("volume").asText());
        assertEquals("snap-uuid-1", s.get("id").asText());
        assertEquals(GIB, s.get("size").asLong());
        assertEquals("available", s.get("state").asText());
        Reply repeat = http.post("/v1/volumes/vol1/snapshots", "{\"name\":\"s1\",\"id\":\"snap-uuid-1\"}");
        assertEquals(200, repeat.status(), repeat.toString());
        assertEquals(s, repeat.json());
        assertError(http.post("/v1/volumes/vol1/snapshots", "{\"name\":\"s1\"}"), 409, "SNAPSHOT_EXISTS");
        assertError(http.post("/v1/volumes/vol1/snapshots", "{\"name\":\"Bad Name\"}"), 400, "INVALID_NAME");
        assertError(http.post("/v1/volumes/vol1/snapshots", "{}"), 400, "INVALID_NAME");
        assertError(http.post("/v1/volumes/vol1/snapshots", "nope"), 400, "MALFORMED_JSON");
        assertError(http.post("/v1/volumes/nope/snapshots", "{\"name\":\"s1\"}"), 404, "VOLUME_NOT_FOUND");
        assertEquals(201, http.post("/v1/volumes/vol1/snapshots", "{\"name\":\"s2\"}").status());

        JsonNode after = http.get("/v1/volumes/vol1").json();
        assertEquals(3, layers(after).size());
        assertEquals(before.get("id").asLong(), layers(after).get(0));

        JsonNode list = http.get("/v1/volumes/vol1/snapshots").json().get("snapshots");
        assertEquals(2, list.size());
        assertEquals("s1", list.get(0).get("name").asText());
        assertEquals("s2", list.get(1).get("name").asText());
        assertEquals(s, http.get("/v1/volumes/vol1/snapshots/s1").json());
        assertError(http.get("/v1/volumes/vol1/snapshots/s9"), 404, "SNAPSHOT_NOT_FOUND");
        assertError(http.get("/v1/volumes/nope/snapshots"), 404, "VOLUME_NOT_FOUND");

        assertError(http.delete("/v1/volumes/vol1"), 409, "VOLUME_HAS_SNAPSHOTS");
        assertEquals(204, http.delete("/v1/volumes/vol1/snapshots/s1").status());
        assertError(http.delete("/v1/volumes/vol1/snapshots/s1"), 404, "SNAPSHOT_NOT_FOUND");
        assertEquals(204, http.delete("/v1/volumes/vol1/snapshots/s2").status());
        assertEquals(204, http.delete("/v1/volumes/vol1").status());
    }

    @Test
    void clonesOfSnapshotsAndVolumes() throws Exception {
        assertEquals(201, http.post("/v1/volumes/vol1/snapshots", "{\"name\":\"s1\"}").status());
        Reply c = http.post("/v1/volumes", "{\"name\":\"c1\",\"source\":{\"snapshot\":\"vol1/s1\"},\"id\":\"cl\"}");
        assertEquals(201, c.status(), c.toString());
        JsonNode clone = c.json();
        assertEquals(GIB, clone.get("size").asLong());
        assertEquals(1L << 20, clone.get("chunkSize").asLong());
        assertEquals("vol1", clone.get("source").get("volume").asText());
        assertEquals("s1", clone.get("source").get("snapshot").asText());
        JsonNode vol = http.get("/v1/volumes/vol1").json();
        assertEquals(List.of(layers(vol).get(0), clone.get("id").asLong()), layers(clone));
        Reply again = http.post("/v1/volumes", "{\"name\":\"c1\",\"source\":{\"snapshot\":\"vol1/s1\"},\"id\":\"cl\"}");
        assertEquals(200, again.status(), again.toString());

        assertError(http.post("/v1/volumes", "{\"name\":\"c2\",\"size\":\"512M\",\"source\":{\"snapshot\":\"vol1/s1\"}}"),
                400, "INVALID_SIZE");
        assertError(http.post("/v1/volumes", "{\"name\":\"c2\",\"chunkSize\":\"4M\",\"source\":{\"volume\":\"vol1\"}}"),
                400, "INVALID_CHUNK_SIZE");
        assertError(http.post("/v1/volumes", "{\"name\":\"c2\",\"source\":{\"snapshot\":\"vol1\"}}"), 400,
                "INVALID_SOURCE");
        assertError(http.post("/v1/volumes", "{\"name\":\"c2\",\"source\":{\"volume\":\"a\",\"snapshot\":\"a/b\"}}"),
                400, "INVALID_SOURCE");
        assertError(http.post("/v1/volumes", "{\"name\":\"c2\",\"source\":{\"snapshot\":\"vol1/s9\"}}"), 404,
                "SOURCE_NOT_FOUND");
        assertError(http.post("/v1/volumes", "{\"name\":\"c2\",\"source\":{\"volume\":\"nope\"}}"), 404,
                "SOURCE_NOT_FOUND");
        assertError(http.post("/v1/volumes", "{\"name\":\"c1\",\"source\":{\"volume\":\"vol1\"}}"), 409,
                "VOLUME_EXISTS");

        Reply fromVolume = http.post("/v1/volumes", "{\"name\":\"c3\",\"size\":\"2G\",\"source\":{\"volume\":\"vol1\"}}");
        assertEquals(201, fromVolume.status(), fromVolume.toString());
        assertEquals(2 * GIB, fromVolume.json().get("size").asLong());
        assertTrue(fromVolume.json().get("source").get("snapshot").isNull());
        JsonNode volAfter = http.get("/v1/volumes/vol1").json();
        List<Long> shared = layers(volAfter).subList(0, layers(volAfter).size() - 1);
        assertEquals(shared, layers(fromVolume.json()).subList(0, 2));

        // Deleting the snapshot leaves the clone intact.
        assertEquals(204, http.delete("/v1/volumes/vol1/snapshots/s1").status());
        assertEquals(layers(clone), layers(http.get("/v1/volumes/c1").json()));
    }

    @Test
    void revertAndExtend() throws Exception {
        assertEquals(201, http.post("/v1/volumes/vol1/snapshots", "{\"name\":\"s1\"}").status());
        assertEquals(201, http.post("/v1/volumes/vol1/snapshots", "{\"name\":\"s2\"}").status());
        List<Long> before = layers(http.get("/v1/volumes/vol1").json());
        assertError(http.post("/v1/volumes/vol1/revert", "{\"snapshot\":\"s1\"}"), 409, "NOT_LATEST_SNAPSHOT");
        assertError(http.post("/v1/volumes/vol1/revert", "{\"snapshot\":\"s9\"}"), 404, "SNAPSHOT_NOT_FOUND");
        assertError(http.post("/v1/volumes/vol1/revert", "{}"), 400, "INVALID_SNAPSHOT");
        Reply r = http.post("/v1/volumes/vol1/revert", "{\"snapshot\":\"s2\"}");
        assertEquals(200, r.status(), r.toString());
        List<Long> after = layers(r.json());
        assertEquals(before.subList(0, 2), after.subList(0, 2));
        assertTrue(after.get(2) > before.get(2));

        assertError(http.post("/v1/volumes/vol1/extend", "{\"size\":\"1G\"}"), 400, "INVALID_SIZE");
        assertError(http.post("/v1/volumes/vol1/extend", "{\"size\":\"big\"}"), 400, "INVALID_SIZE");
        assertError(http.post("/v1/volumes/nope/extend", "{\"size\":\"2G\"}"), 404, "VOLUME_NOT_FOUND");
        Reply e = http.post("/v1/volumes/vol1/extend", "{\"size\":\"3G\"}");
        assertEquals(200, e.status(), e.toString());
        assertEquals(3 * GIB, e.json().get("size").asLong());
        assertEquals(3 * GIB, http.get("/v1/volumes/vol1").json().get("size").asLong());
    }

    @Test
    void chunkRoutesTakeALayer() throws Exception {
        long first = http.get("/v1/volumes/vol1").json().get("id").asLong();
        assertEquals(201, http.post("/v1/volumes/vol1/snapshots", "{\"name\":\"s1\"}").status());
        Reply old = http.get("/v1/volumes/vol1/chunks/0?layer=" + first);
        assertEquals(200, old.status(), old.toString());
        assertFalse(old.json().get("allocated").asBoolean());
        assertError(http.get("/v1/volumes/vol1/chunks/0?layer=999"), 400, "INVALID_LAYER");
        assertError(http.post("/v1/volumes/vol1/chunks/0?layer=" + first, ""), 409, "STALE_LAYER");
    }

    private static List<String> fieldNames(JsonNode n) {
        List<String> out = new ArrayList<>();
        n.fieldNames().forEachRemaining(out::add);
        return out;
    }
}
