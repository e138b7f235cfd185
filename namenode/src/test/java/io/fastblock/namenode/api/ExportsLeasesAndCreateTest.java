package io.fastblock.namenode.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.fastblock.namenode.NameNode;
import io.fastblock.namenode.NameNodeConfig;
import io.fastblock.namenode.TestHttp;
import io.fastblock.namenode.TestHttp.Reply;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.NodeRecord;
import io.fastblock.protocol.meta.ZkPaths;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Idempotent create, thin provisioning, exports and gateway access, leases and tenants over real HTTP and ZooKeeper. */
class ExportsLeasesAndCreateTest {
    private static final long GIB = 1L << 30;
    private static final String INITIATOR = "iqn.1994-05.com.redhat:compute-1";

    @TempDir
    Path dir;
    private TestingServer zkServer;
    private NameNode namenode;
    private TestHttp http;
    private CuratorFramework storageSide;

    @BeforeEach
    void start() throws Exception {
        zkServer = new TestingServer(true);
        namenode = NameNode.start(NameNodeConfig.fromArgs("--data-dir=" + dir, "--http-port=0",
                "--zk=" + zkServer.getConnectString(), "--oversubscription=2", "--lease-ttl-ms=2000"));
        http = new TestHttp(namenode.baseUrl());
        storageSide = CuratorFrameworkFactory.newClient(zkServer.getConnectString(), new RetryOneTime(100));
        storageSide.start();
        // 3 x 30 GiB raw = 30 GiB usable; x2 = 60 GiB may be provisioned.
        for (int i = 1; i <= 3; i++) {
            storageSide.create().creatingParentsIfNeeded().forPath(ZkPaths.node("s" + i),
                    MetaJson.write(new NodeRecord("s" + i, "127.0.0.1", 9400 + i, 30 * GIB, 30 * GIB)));
        }
    }

    @AfterEach
    void stop() throws Exception {
        storageSide.close();
        namenode.close();
        zkServer.close();
    }

    private static void assertError(Reply r, int status, String code) {
        assertEquals(status, r.status(), r.toString());
        assertEquals(code, r.code(), r.toString());
        assertFalse(r.json().get("message").asText().isBlank(), r.toString());
    }

    @Test
    void createWithClientIdIsIdempotent() throws Exception {
        String body = "{\"name\":\"v1\",\"size\":\"1G\",\"id\":\"9f1c-uuid\",\"tenant\":\"acme\","
                + "\"qos\":{\"totalIopsSec\":500,\"writeBytesSec\":1048576}}";
        Reply first = http.post("/v1/volumes", body);
        assertEquals(201, first.status(), first.toString());
        assertEquals("9f1c-uuid", first.json().get("clientId").asText());
        assertEquals("acme", first.json().get("tenant").asText());
        assertEquals(500, first.json().get("qos").get("totalIopsSec").asLong());
        assertEquals(1048576, first.json().get("qos").get("writeBytesSec").asLong());
        Reply again = http.post("/v1/volumes", body);
        assertEquals(200, again.status(), again.toString());
        assertEquals(first.json().get("id"), again.json().get("id"));
        assertEquals(first.json().get("createdAt"), again.json().get("createdAt"));

        assertError(http.post("/v1/volumes", "{\"name\":\"v1\",\"size\":\"2G\",\"id\":\"9f1c-uuid\",\"tenant\":\"acme\"}"),
                409, "IDEMPOTENCY_CONFLICT");
        assertError(http.post("/v1/volumes", "{\"name\":\"v2\",\"size\":\"1G\",\"id\":\"9f1c-uuid\"}"),
                409, "IDEMPOTENCY_CONFLICT");
        // Same name, another id (or none): the name is taken.
        assertError(http.post("/v1/volumes", "{\"name\":\"v1\",\"size\":\"1G\",\"id\":\"other\"}"), 409, "VOLUME_EXISTS");
        assertError(http.post("/v1/volumes", "{\"name\":\"v1\",\"size\":\"1G\"}"), 409, "VOLUME_EXISTS");

        // Deleting releases the id: it may create again.
        assertEquals(204, http.delete("/v1/volumes/v1").status());
        assertEquals(201, http.post("/v1/volumes", body).status());
    }

    @Test
    void concurrentCreatesWithOneIdMakeOneVolume() throws Exception {
        String body = "{\"name\":\"race\",\"size\":\"1G\",\"id\":\"req-1\"}";
        ExecutorService pool = Executors.newFixedThreadPool(6);
        try {
            List<Future<Reply>> replies = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                replies.add(pool.submit((Callable<Reply>) () -> http.post("/v1/volumes", body)));
            }
            int created = 0;
            long id = -1;
            for (Future<Reply> f : replies) {
                Reply r = f.get();
                assertTrue(r.status() == 201 || r.status() == 200, r.toString());
                created += r.status() == 201 ? 1 : 0;
                assertTrue(id == -1 || id == r.json().get("id").asLong(), r.toString());
                id = r.json().get("id").asLong();
            }
            assertEquals(1, created);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void badCreateFieldsGetTheirOwnCodes() throws Exception {
        assertError(http.post("/v1/volumes", "{\"name\":\"a\",\"size\":\"1G\",\"id\":\"has space\"}"), 400, "INVALID_ID");
        assertError(http.post("/v1/volumes", "{\"name\":\"a\",\"size\":\"1G\",\"tenant\":5}"), 400, "INVALID_TENANT");
        assertError(http.post("/v1/volumes", "{\"name\":\"a\",\"size\":\"1G\",\"qos\":{\"iops\":5}}"), 400, "INVALID_QOS");
        assertError(http.post("/v1/volumes", "{\"name\":\"a\",\"size\":\"1G\",\"qos\":{\"readIopsSec\":-1}}"), 400,
                "INVALID_QOS");
        assertError(http.post("/v1/volumes", "{\"name\":\"a\",\"size\":\"1G\",\"qos\":[]}"), 400, "INVALID_QOS");
    }

    @Test
    void thinProvisioningStopsAtTheRatioAndStatusIsHonest() throws Exception {
        assertEquals(201, http.post("/v1/volumes", "{\"name\":\"a\",\"size\":\"40G\"}").status());
        assertEquals(201, http.post("/v1/volumes", "{\"name\":\"b\",\"size\":\"20G\"}").status());
        Reply over = http.post("/v1/volumes", "{\"name\":\"c\",\"size\":512}");
        assertError(over, 507, "INSUFFICIENT_CAPACITY");
        assertTrue(over.json().get("message").asText().contains("over-subscription 2.0"), over.toString());
        JsonNode cap = http.get("/v1/status").json().get("capacity");
        assertEquals(90 * GIB, cap.get("raw").asLong());
        assertEquals(30 * GIB, cap.get("usable").asLong());
        assertEquals(60 * GIB, cap.get("provisioned").asLong());
        assertEquals(0, cap.get("allocated").asLong());
        assertEquals(60 * GIB, cap.get("provisionable").asLong());
        // Deleting makes room again.
        assertEquals(204, http.delete("/v1/volumes/b").status());
        assertEquals(201, http.post("/v1/volumes", "{\"name\":\"c\",\"size\":\"20G\"}").status());
    }

    @Test
    void exportsGenerateChapAreIdempotentAndDecideGatewayAccess() throws Exception {
        assertEquals(201, http.post("/v1/volumes", "{\"name\":\"v1\",\"size\":\"1G\"}").status());
        String target = "iqn.2026-11.io.fastblock:v1";
        JsonNode denied = http.get("/v1/gateway/access?target=" + target + "&initiator=" + INITIATOR).json();
        assertFalse(denied.get("allowed").asBoolean(), denied.toString());

        Reply made = http.post("/v1/volumes/v1/exports", "{\"initiator\":\"" + INITIATOR + "\",\"host\":\"compute-1\"}");
        assertEquals(201, made.status(), made.toString());
        JsonNode chap = made.json().get("chap");
        assertEquals(16, chap.get("secret").asText().length());
        assertNull(chap.get("targetUser").textValue());
        assertEquals(target, made.json().get("iqn").asText());
        assertEquals("compute-1", made.json().get("host").asText());
        Instant.parse(made.json().get("createdAt").asText());

        Reply again = http.post("/v1/volumes/v1/exports", "{\"initiator\":\"" + INITIATOR + "\",\"chap\":\"none\"}");
        assertEquals(200, again.status());
        assertEquals(chap.get("secret"), again.json().get("chap").get("secret"), "first credentials are kept");

        JsonNode allowed = http.get("/v1/gateway/access?target=" + target + "&initiator=" + INITIATOR).json();
        assertTrue(allowed.get("allowed").asBoolean(), allowed.toString());
        assertEquals(chap.get("secret"), allowed.get("chap").get("secret"));
        assertEquals("v1", allowed.get("volume").asText());
        JsonNode stranger = http.get("/v1/gateway/access?target=" + target + "&initiator=iqn.2000-01.com.x:y").json();
        assertFalse(stranger.get("allowed").asBoolean());

        // An open export lets anyone in without CHAP, but the initiator's own export still wins.
        assertEquals(201, http.post("/v1/volumes/v1/exports", "{\"initiator\":\"*\",\"chap\":\"none\"}").status());
        JsonNode open = http.get("/v1/gateway/access?target=" + target + "&initiator=iqn.2000-01.com.x:y").json();
        assertTrue(open.get("allowed").asBoolean());
        assertTrue(open.get("chap").isNull());
        assertEquals(chap.get("secret"),
                http.get("/v1/gateway/access?target=" + target + "&initiator=" + INITIATOR).json().get("chap").get("secret"));

        Reply mutual = http.post("/v1/volumes/v1/exports", "{\"initiator\":\"iqn.2001-04.com.example:m\",\"chap\":"
                + "{\"user\":\"u1\",\"secret\":\"abcdefghijkl\",\"targetUser\":\"t1\",\"targetSecret\":\"mnopqrstuvwx\"}}");
        assertEquals(201, mutual.status(), mutual.toString());
        assertEquals("t1", mutual.json().get("chap").get("targetUser").asText());

        JsonNode list = http.get("/v1/volumes/v1/exports").json().get("exports");
        assertEquals(3, list.size());
        assertEquals("*", list.get(0).get("initiator").asText());

        assertEquals(204, http.delete("/v1/volumes/v1/exports/" + INITIATOR).status());
        assertEquals(204, http.delete("/v1/volumes/v1/exports/*").status());
        assertError(http.delete("/v1/volumes/v1/exports/*"), 404, "EXPORT_NOT_FOUND");
        assertFalse(http.get("/v1/gateway/access?target=" + target + "&initiator=" + INITIATOR).json()
                .get("allowed").asBoolean());
        JsonNode ghost = http.get("/v1/gateway/access?target=iqn.2026-11.io.fastblock:nope&initiator=" + INITIATOR).json();
        assertFalse(ghost.get("allowed").asBoolean());
        assertError(http.get("/v1/gateway/access?target=" + target), 400, "BAD_REQUEST");
    }

    @Test
    void badExportsAreRefusedPrecisely() throws Exception {
        assertEquals(201, http.post("/v1/volumes", "{\"name\":\"v1\",\"size\":\"1G\"}").status());
        assertError(http.post("/v1/volumes/v1/exports", "{\"initiator\":\"not-an-iqn\"}"), 400, "INVALID_INITIATOR");
        assertError(http.post("/v1/volumes/v1/exports", "{}"), 400, "INVALID_INITIATOR");
        assertError(http.post("/v1/volumes/v1/exports", "{\"initiator\":\"" + INITIATOR + "\",\"chap\":\"maybe\"}"),
                400, "INVALID_CHAP");
        assertError(http.post("/v1/volumes/v1/exports", "{\"initiator\":\"" + INITIATOR
                + "\",\"chap\":{\"user\":\"u\",\"secret\":\"short\"}}"), 400, "INVALID_CHAP");
        assertError(http.post("/v1/volumes/v1/exports", "{\"initiator\":\"" + INITIATOR
                + "\",\"chap\":{\"user\":\"u\",\"secret\":\"abcdefghijkl\",\"targetUser\":\"t\"}}"), 400, "INVALID_CHAP");
        assertError(http.post("/v1/volumes/v1/exports", "{\"initiator\":\"" + INITIATOR
                + "\",\"chap\":{\"user\":\"u\",\"secret\":\"abcdefghijkl\",\"targetUser\":\"t\","
                + "\"targetSecret\":\"abcdefghijkl\"}}"), 400, "INVALID_CHAP");
        assertError(http.post("/v1/volumes/v1/exports", "{\"initiator\":\"" + INITIATOR + "\",\"host\":7}"), 400,
                "INVALID_HOST");
        assertError(http.post("/v1/volumes/nope/exports", "{\"initiator\":\"" + INITIATOR + "\"}"), 404,
                "VOLUME_NOT_FOUND");
        assertError(http.get("/v1/volumes/nope/exports"), 404, "VOLUME_NOT_FOUND");
    }

    @Test
    void leaseIsRenewedByItsHolderAndMovesWithAHigherEpoch() throws Exception {
        assertEquals(201, http.post("/v1/volumes", "{\"name\":\"v1\",\"size\":\"1G\"}").status());
        JsonNode none = http.get("/v1/volumes/v1/lease").json();
        assertEquals(0, none.get("epoch").asLong());
        assertTrue(none.get("holder").isNull());
        JsonNode a = http.post("/v1/volumes/v1/lease", "{\"gateway\":\"gw-a\"}").json();
        assertEquals("gw-a", a.get("holder").asText());
        assertEquals(1, a.get("epoch").asLong());
        assertEquals(2000, a.get("ttlMs").asLong());
        Instant firstExpiry = Instant.parse(a.get("expiresAt").asText());
        Thread.sleep(20);
        JsonNode renewed = http.post("/v1/volumes/v1/lease", "{\"gateway\":\"gw-a\",\"epoch\":1}").json();
        assertEquals(1, renewed.get("epoch").asLong());
        assertTrue(Instant.parse(renewed.get("expiresAt").asText()).isAfter(firstExpiry));

        // Live migration: the other gateway writes, the lease moves, the epoch grows.
        JsonNode b = http.post("/v1/volumes/v1/lease", "{\"gateway\":\"gw-b\"}").json();
        assertEquals(b, http.get("/v1/volumes/v1/lease").json(), "GET shows the lease without taking it");
        assertEquals("gw-b", b.get("holder").asText());
        assertEquals(2, b.get("epoch").asLong());
        // The old holder's renewal is refused: it never takes the lease back by renewing.
        assertError(http.post("/v1/volumes/v1/lease", "{\"gateway\":\"gw-a\",\"epoch\":1}"), 409, "LEASE_LOST");
        assertEquals(2, http.post("/v1/volumes/v1/lease", "{\"gateway\":\"gw-b\",\"epoch\":2}").json().get("epoch").asLong());
        // Asking outright (a new write session on gw-a) takes it back with yet another epoch.
        assertEquals(3, http.post("/v1/volumes/v1/lease", "{\"gateway\":\"gw-a\"}").json().get("epoch").asLong());

        assertError(http.post("/v1/volumes/v1/lease", "{}"), 400, "INVALID_GATEWAY");
        assertError(http.post("/v1/volumes/v1/lease", "{\"gateway\":\"g\",\"epoch\":0}"), 400, "INVALID_EPOCH");
        assertError(http.post("/v1/volumes/nope/lease", "{\"gateway\":\"g\"}"), 404, "VOLUME_NOT_FOUND");
        // Deleting the volume drops the lease; a new volume of that name starts at epoch 1 under its own id.
        assertEquals(204, http.delete("/v1/volumes/v1").status());
        assertNull(storageSide.checkExists().forPath(ZkPaths.lease(1)));
    }

    @Test
    void tenantsHaveWeights() throws Exception {
        assertEquals(200, http.put("/v1/tenants/acme", "{\"weight\":300}").status());
        assertEquals(200, http.put("/v1/tenants/acme", "{\"weight\":200}").status());
        assertEquals(200, http.put("/v1/tenants/zeta", "{\"weight\":1}").status());
        JsonNode t = http.get("/v1/tenants").json().get("tenants");
        assertEquals(2, t.size());
        assertEquals("acme", t.get(0).get("name").asText());
        assertEquals(200, t.get(0).get("weight").asInt());
        assertError(http.put("/v1/tenants/acme", "{\"weight\":0}"), 400, "INVALID_WEIGHT");
        assertError(http.put("/v1/tenants/a%20b", "{\"weight\":1}"), 400, "INVALID_TENANT");
    }

    @Test
    void drainMarksTheNodeAndUnknownNodesAre404() throws Exception {
        Reply r = http.post("/v1/nodes/s1/drain", "");
        assertEquals(202, r.status(), r.toString());
        // s1 holds no chunks, so the leader may finish draining it before the answer reads the state back.
        String state = r.json().get("state").asText();
        assertTrue(state.equals("draining") || state.equals("decommissioned"), r.toString());
        assertError(http.post("/v1/nodes/nope/drain", ""), 404, "NODE_NOT_FOUND");
        assertNotEquals("draining", http.get("/v1/nodes").json().get("nodes").get(1).get("state").asText());
    }
}
