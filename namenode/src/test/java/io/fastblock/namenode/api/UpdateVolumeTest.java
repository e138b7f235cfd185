package io.fastblock.namenode.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.fastblock.namenode.NameNode;
import io.fastblock.namenode.NameNodeConfig;
import io.fastblock.namenode.TestHttp;
import io.fastblock.namenode.TestHttp.Reply;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.NodeRecord;
import io.fastblock.protocol.meta.VolumeRecord;
import io.fastblock.protocol.meta.ZkPaths;
import java.nio.file.Path;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** PATCH /v1/volumes/{name}: rename and QoS change, over real HTTP and a real ZooKeeper. */
class UpdateVolumeTest {
    private static final long GIB = 1L << 30;
    private static final String INITIATOR = "iqn.1994-05.com.redhat:compute-1";

    @TempDir
    Path dir;
    private TestingServer zkServer;
    private NameNode namenode;
    private TestHttp http;
    private CuratorFramework zk;

    @BeforeEach
    void start() throws Exception {
        zkServer = new TestingServer(true);
        namenode = NameNode.start(NameNodeConfig.fromArgs("--data-dir=" + dir, "--http-port=0",
                "--zk=" + zkServer.getConnectString(), "--lease-ttl-ms=60000"));
        http = new TestHttp(namenode.baseUrl());
        zk = CuratorFrameworkFactory.newClient(zkServer.getConnectString(), new RetryOneTime(100));
        zk.start();
        for (int i = 1; i <= 3; i++) {
            zk.create().creatingParentsIfNeeded().forPath(ZkPaths.node("s" + i),
                    MetaJson.write(new NodeRecord("s" + i, "127.0.0.1", 9400 + i, 30 * GIB, 30 * GIB)));
        }
    }

    @AfterEach
    void stop() throws Exception {
        zk.close();
        namenode.close();
        zkServer.close();
    }

    private static void assertError(Reply r, int status, String code) {
        assertEquals(status, r.status(), r.toString());
        assertEquals(code, r.code(), r.toString());
        assertFalse(r.json().get("message").asText().isBlank(), r.toString());
    }

    private Reply patch(String name, String body) throws Exception {
        return http.send("PATCH", "/v1/volumes/" + name, body);
    }

    @Test
    void qosChangeIsStoredInTheRecordAndShown() throws Exception {
        assertEquals(201, http.post("/v1/volumes", "{\"name\":\"v1\",\"size\":\"1G\",\"qos\":{\"totalIopsSec\":100}}")
                .status());
        Reply r = patch("v1", "{\"qos\":{\"totalIopsSec\":500,\"readBytesSec\":1048576}}");
        assertEquals(200, r.status(), r.toString());
        assertEquals(500, r.json().get("qos").get("totalIopsSec").asLong());
        assertEquals(1048576, r.json().get("qos").get("readBytesSec").asLong());
        assertEquals(0, r.json().get("qos").get("writeIopsSec").asLong());
        // The gateway reads the record from ZooKeeper: the limits are there.
        VolumeRecord stored = MetaJson.read(zk.getData().forPath(ZkPaths.volume("v1")), VolumeRecord.class);
        assertEquals(500, stored.qos().totalIopsSec());
        assertEquals(1048576, stored.qos().readBytesSec());
        assertEquals(r.json(), http.get("/v1/volumes/v1").json());
        // {} clears every limit.
        assertTrue(MetaJson.read(zk.getData().forPath(ZkPaths.volume(
                patch("v1", "{\"qos\":{}}").json().get("name").asText())), VolumeRecord.class).qos().unlimited());
    }

    @Test
    void renameMovesRecordChunkMapAndExportsAndKeepsTheId() throws Exception {
        JsonNode created = http.post("/v1/volumes", "{\"name\":\"v1\",\"size\":\"1G\",\"chunkSize\":\"1M\","
                + "\"id\":\"cinder-uuid-1\",\"qos\":{\"totalIopsSec\":7}}").json();
        JsonNode export = http.post("/v1/volumes/v1/exports", "{\"initiator\":\"" + INITIATOR + "\"}").json();
        // Allocation needs replication groups; write chunk map entries the way the store keeps them.
        Reply alloc = http.post("/v1/volumes/v1/chunks/3", "");
        boolean haveGroups = alloc.status() == 200;

        Reply r = patch("v1", "{\"name\":\"volume-0c3e\"}");
        assertEquals(200, r.status(), r.toString());
        assertEquals("volume-0c3e", r.json().get("name").asText());
        assertEquals(created.get("id"), r.json().get("id"));
        assertEquals(created.get("createdAt"), r.json().get("createdAt"));
        assertEquals(7, r.json().get("qos").get("totalIopsSec").asLong());
        assertEquals("iqn.2026-11.io.fastblock:volume-0c3e", r.json().get("iqn").asText());

        assertError(http.get("/v1/volumes/v1"), 404, "VOLUME_NOT_FOUND");
        assertNull(zk.checkExists().forPath(ZkPaths.volume("v1")));
        JsonNode exports = http.get("/v1/volumes/volume-0c3e/exports").json().get("exports");
        assertEquals(1, exports.size());
        assertEquals("volume-0c3e", exports.get(0).get("volume").asText());
        assertEquals(export.get("chap"), exports.get(0).get("chap"), "same credentials after the rename");
        JsonNode access = http.get("/v1/gateway/access?target=iqn.2026-11.io.fastblock:volume-0c3e&initiator="
                + INITIATOR).json();
        assertTrue(access.get("allowed").asBoolean(), access.toString());
        if (haveGroups) {
            assertEquals(alloc.json(), http.get("/v1/volumes/volume-0c3e/chunks/3").json());
        }
        // The client id now names the new volume: a repeat of the original create is a new volume v1,
        // not a conflict with a record that no longer exists under that name... it answers the renamed one.
        assertEquals("volume-0c3e", new String(zk.getData().forPath(ZkPaths.clientId("cinder-uuid-1"))));
        // Renaming back works, and renaming to the current name is a no-op.
        assertEquals(200, patch("volume-0c3e", "{\"name\":\"volume-0c3e\"}").status());
        assertEquals("v1", patch("volume-0c3e", "{\"name\":\"v1\"}").json().get("name").asText());
        assertEquals(1, http.get("/v1/volumes").json().get("volumes").size());
    }

    @Test
    void renameToATakenNameIsVolumeExistsAndChangesNothing() throws Exception {
        http.post("/v1/volumes", "{\"name\":\"v1\",\"size\":\"1G\"}");
        http.post("/v1/volumes", "{\"name\":\"v2\",\"size\":\"2G\"}");
        assertError(patch("v1", "{\"name\":\"v2\"}"), 409, "VOLUME_EXISTS");
        assertEquals(GIB, http.get("/v1/volumes/v1").json().get("size").asLong());
        assertEquals(2 * GIB, http.get("/v1/volumes/v2").json().get("size").asLong());
    }

    @Test
    void renameIsRefusedWhileAGatewayHoldsTheLeaseButQosChangeIsNot() throws Exception {
        http.post("/v1/volumes", "{\"name\":\"v1\",\"size\":\"1G\"}");
        assertEquals(200, http.post("/v1/volumes/v1/lease", "{\"gateway\":\"gw-a\"}").status());
        Reply r = patch("v1", "{\"name\":\"v9\"}");
        assertError(r, 409, "VOLUME_ATTACHED");
        assertTrue(r.json().get("message").asText().contains("gw-a"), r.toString());
        assertEquals(200, http.get("/v1/volumes/v1").status());
        Reply q = patch("v1", "{\"qos\":{\"writeIopsSec\":42}}");
        assertEquals(200, q.status(), q.toString());
        assertEquals(42, q.json().get("qos").get("writeIopsSec").asLong());
    }

    @Test
    void badRequestsArePreciseErrors() throws Exception {
        http.post("/v1/volumes", "{\"name\":\"v1\",\"size\":\"1G\"}");
        assertError(patch("missing", "{\"name\":\"v2\"}"), 404, "VOLUME_NOT_FOUND");
        assertError(patch("v1", "{\"name\":\"Bad_Name\"}"), 400, "INVALID_NAME");
        assertError(patch("v1", "{\"name\":7}"), 400, "INVALID_NAME");
        assertError(patch("v1", "{\"qos\":{\"iops\":5}}"), 400, "INVALID_QOS");
        assertError(patch("v1", "{\"qos\":{\"totalIopsSec\":-1}}"), 400, "INVALID_QOS");
        assertError(patch("v1", "{\"size\":\"2G\"}"), 400, "INVALID_FIELD");
        assertError(patch("v1", "not json"), 400, "MALFORMED_JSON");
        assertError(patch("v1", ""), 400, "MALFORMED_JSON");
        assertEquals(GIB, http.get("/v1/volumes/v1").json().get("size").asLong());
    }
}
