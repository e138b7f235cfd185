package io.fastblock.namenode.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
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
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The REST contract over real HTTP against a namenode on a real (test) ZooKeeper. */
class NameNodeApiTest {
    private static final long GIB = 1L << 30;

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
                "--zk=" + zkServer.getConnectString(), "--oversubscription=0"));
        http = new TestHttp(namenode.baseUrl());
    }

    @AfterEach
    void stop() throws Exception {
        if (storageSide != null) {
            storageSide.close();
        }
        namenode.close();
        zkServer.close();
    }

    private Reply create(String json) throws Exception {
        return http.post("/v1/volumes", json);
    }

    private static void assertError(Reply r, int status, String code) {
        assertEquals(status, r.status(), r.toString());
        assertEquals(code, r.code(), r.toString());
        assertFalse(r.json().get("message").asText().isBlank(), r.toString());
        assertEquals("application/json", r.raw().headers().firstValue("Content-Type").orElse(""));
    }

    @Test
    void health() throws Exception {
        Reply r = http.get("/v1/health");
        assertEquals(200, r.status());
        assertEquals("ok", r.json().get("status").asText());
    }

    @Test
    void createGetListDelete() throws Exception {
        Reply created = create("{\"name\":\"vol1\",\"size\":\"10G\"}");
        assertEquals(201, created.status(), created.toString());
        JsonNode v = created.json();
        assertEquals(1, v.get("id").asLong());
        assertEquals("vol1", v.get("name").asText());
        assertEquals(10 * GIB, v.get("size").asLong());
        assertEquals(512, v.get("blockSize").asInt());
        assertEquals(64L << 20, v.get("chunkSize").asLong());
        assertEquals("iqn.2026-11.io.fastblock:vol1", v.get("iqn").asText());
        assertEquals("available", v.get("state").asText());
        Instant.parse(v.get("createdAt").asText());
        assertEquals(0, v.get("allocatedChunks").asInt());
        assertEquals(List.of("id", "name", "size", "blockSize", "chunkSize", "iqn", "state", "createdAt",
                "allocatedChunks", "tenant", "qos", "clientId", "source", "layers"), fieldNames(v));

        Reply second = create("{\"name\":\"vol2\",\"size\":1073741824,\"chunkSize\":1048576}");
        assertEquals(201, second.status(), second.toString());
        assertEquals(2, second.json().get("id").asLong());
        assertEquals(1L << 20, second.json().get("chunkSize").asLong());

        Reply got = http.get("/v1/volumes/vol1");
        assertEquals(200, got.status());
        assertEquals(v, got.json());

        Reply list = http.get("/v1/volumes");
        assertEquals(200, list.status());
        assertEquals(List.of("vol1", "vol2"), names(list.json().get("volumes")));

        Reply deleted = http.delete("/v1/volumes/vol1");
        assertEquals(204, deleted.status());
        assertEquals("", deleted.body());
        assertError(http.get("/v1/volumes/vol1"), 404, "VOLUME_NOT_FOUND");
        assertError(http.delete("/v1/volumes/vol1"), 404, "VOLUME_NOT_FOUND");
        assertEquals(List.of("vol2"), names(http.get("/v1/volumes").json().get("volumes")));
    }

    @Test
    void sizeForms() throws Exception {
        assertEquals(512 << 20, create("{\"name\":\"a\",\"size\":\"512MiB\"}").json().get("size").asLong());
        assertEquals(1L << 40, create("{\"name\":\"b\",\"size\":\"1T\"}").json().get("size").asLong());
        assertEquals(4096, create("{\"name\":\"c\",\"size\":\"4096\"}").json().get("size").asLong());
        assertEquals(512, create("{\"name\":\"d\",\"size\":512}").json().get("size").asLong());
    }

    @Test
    void invalidSizes() throws Exception {
        for (String size : new String[] {"0", "-1", "-512", "1000", "511", "1.5", "1e9", "\"abc\"", "\"10X\"",
                "\"1.5G\"", "\"\"", "\"0\"", "\"-1G\"", "true", "[1]", "{}", "null", "99999999999999999999999",
                "\"99999999999999999999999\"", "\"8192P\""}) {
            assertError(create("{\"name\":\"vol1\",\"size\":" + size + "}"), 400, "INVALID_SIZE");
        }
        assertError(create("{\"name\":\"vol1\"}"), 400, "INVALID_SIZE");
        assertTrue(http.get("/v1/volumes").json().get("volumes").isEmpty());
    }

    @Test
    void invalidNames() throws Exception {
        for (String name : new String[] {"\"\"", "\"Vol1\"", "\"-vol\"", "\".vol\"", "\"vol_1\"", "\"vol/1\"",
                "\"v" + "x".repeat(63) + "\"", "1", "null", "\"..\""}) {
            assertError(create("{\"name\":" + name + ",\"size\":\"1G\"}"), 400, "INVALID_NAME");
        }
        assertError(create("{\"size\":\"1G\"}"), 400, "INVALID_NAME");
        assertEquals(201, create("{\"name\":\"v" + "x".repeat(62) + "\",\"size\":\"1G\"}").status());
        assertEquals(201, create("{\"name\":\"0a.b-c\",\"size\":\"1G\"}").status());
    }

    @Test
    void invalidChunkSizes() throws Exception {
        for (String cs : new String[] {"0", "-1", "1000", "524288", "3145728", "2147483648", "1.5", "\"3M\"",
                "\"abc\"", "true"}) {
            assertError(create("{\"name\":\"vol1\",\"size\":\"1G\",\"chunkSize\":" + cs + "}"), 400,
                    "INVALID_CHUNK_SIZE");
        }
        assertEquals(1L << 30, create("{\"name\":\"a\",\"size\":\"1G\",\"chunkSize\":\"1G\"}").json()
                .get("chunkSize").asLong());
    }

    @Test
    void malformedJson() throws Exception {
        for (String body : new String[] {"", "{", "not json", "[]", "\"vol1\"", "42",
                "{\"name\":\"a\",\"name\":\"b\",\"size\":512}", "{\"name\":\"a\",\"size\":512} {}"}) {
            assertError(create(body), 400, "MALFORMED_JSON");
        }
    }

    @Test
    void duplicateNameConflicts() throws Exception {
        assertEquals(201, create("{\"name\":\"vol1\",\"size\":\"1G\"}").status());
        assertError(create("{\"name\":\"vol1\",\"size\":\"2G\"}"), 409, "VOLUME_EXISTS");
        assertEquals(GIB, http.get("/v1/volumes/vol1").json().get("size").asLong());
    }

    @Test
    void concurrentCreatesOfOneNameOverHttpHaveOneWinner() throws Exception {
        List<Reply> replies = race(8, i -> create("{\"name\":\"same\",\"size\":\"1G\"}"));
        int created = 0;
        for (Reply r : replies) {
            if (r.status() == 201) {
                created++;
            } else {
                assertError(r, 409, "VOLUME_EXISTS");
            }
        }
        assertEquals(1, created);
    }

    @Test
    void notFoundAndMethodNotAllowed() throws Exception {
        assertError(http.get("/v1/volumes/nope"), 404, "VOLUME_NOT_FOUND");
        assertError(http.get("/v1/volumes/NOT..valid"), 404, "VOLUME_NOT_FOUND");
        assertError(http.get("/v1/volumes/nope/chunks/0"), 404, "VOLUME_NOT_FOUND");
        assertError(http.post("/v1/volumes/nope/chunks/0", ""), 404, "VOLUME_NOT_FOUND");
        assertError(http.get("/v1/nothing"), 404, "NOT_FOUND");
        assertError(http.get("/"), 404, "NOT_FOUND");
        assertError(http.get("/v1/volumes/a/b"), 404, "NOT_FOUND");
        Reply r = http.send("PUT", "/v1/volumes", "{}");
        assertError(r, 405, "METHOD_NOT_ALLOWED");
        assertEquals("GET, POST", r.raw().headers().firstValue("Allow").orElse(""));
        assertError(http.delete("/v1/health"), 405, "METHOD_NOT_ALLOWED");
    }

    @Test
    void oversizedBodyIsRejected() throws Exception {
        String big = "{\"name\":\"vol1\",\"size\":\"1G\",\"pad\":\"" + "x".repeat(HttpApi.MAX_BODY_BYTES) + "\"}";
        assertError(create(big), 413, "PAYLOAD_TOO_LARGE");
        assertEquals(404, http.get("/v1/volumes/vol1").status());
        // Exactly at the limit is still read (and here rejected only for what it says).
        String atLimit = "{\"name\":\"vol1\",\"size\":\"1G\",\"pad\":\"\"}";
        atLimit = atLimit.replace("\"\"}", "\"" + "x".repeat(HttpApi.MAX_BODY_BYTES - atLimit.length()) + "\"}");
        assertEquals(HttpApi.MAX_BODY_BYTES, atLimit.length());
        assertEquals(201, create(atLimit).status());
    }

    @Test
    void chunkLookupNeverAllocates() throws Exception {
        create("{\"name\":\"vol1\",\"size\":\"1G\"}"); // 16 chunks of 64 MiB
        registerNodes(3);
        awaitGroups(3);
        Reply r = http.get("/v1/volumes/vol1/chunks/3");
        assertEquals(200, r.status(), r.toString());
        assertEquals(3, r.json().get("index").asLong());
        assertFalse(r.json().get("allocated").asBoolean());
        assertTrue(r.json().get("group").isNull());
        assertEquals(0, http.get("/v1/volumes/vol1").json().get("allocatedChunks").asInt());
        assertEquals(List.of(), storageSide.getChildren().forPath(ZkPaths.chunkMap("vol1")));
    }

    @Test
    void invalidChunkIndexes() throws Exception {
        create("{\"name\":\"vol1\",\"size\":\"1G\"}"); // 16 chunks
        create("{\"name\":\"odd\",\"size\":\"65M\"}"); // 2 chunks, the last one partial
        for (String index : new String[] {"-1", "16", "abc", "1.5", "99999999999999999999"}) {
            assertError(http.get("/v1/volumes/vol1/chunks/" + index), 400, "INVALID_CHUNK_INDEX");
            assertError(http.post("/v1/volumes/vol1/chunks/" + index, ""), 400, "INVALID_CHUNK_INDEX");
        }
        assertEquals(200, http.get("/v1/volumes/vol1/chunks/15").status());
        assertEquals(200, http.get("/v1/volumes/odd/chunks/1").status());
        assertError(http.get("/v1/volumes/odd/chunks/2"), 400, "INVALID_CHUNK_INDEX");
    }

    @Test
    void allocationWithoutGroupsSaysWhy() throws Exception {
        create("{\"name\":\"vol1\",\"size\":\"1G\"}");
        registerNodes(2);
        Reply r = http.post("/v1/volumes/vol1/chunks/0", "");
        assertError(r, 503, "NO_REPLICATION_GROUPS");
        String message = r.json().get("message").asText();
        assertTrue(message.contains("2 storage node(s) live") && message.contains("3 needed"), message);
        assertFalse(http.get("/v1/volumes/vol1/chunks/0").json().get("allocated").asBoolean());
    }

    @Test
    void groupsFormOnceThreeNodesAreLive() throws Exception {
        assertTrue(http.get("/v1/groups").json().get("groups").isEmpty());
        registerNodes(3);
        JsonNode groups = awaitGroups(3);
        List<List<String>> chains = new ArrayList<>();
        for (JsonNode g : groups) {
            assertEquals(1, g.get("chainVersion").asLong());
            List<String> chain = new ArrayList<>();
            for (JsonNode m : g.get("members")) {
                chain.add(m.get("id").asText());
                assertEquals("127.0.0.1", m.get("host").asText());
                assertEquals(9400 + Integer.parseInt(m.get("id").asText().substring("storage-".length())),
                        m.get("port").asInt());
                assertTrue(m.get("live").asBoolean());
            }
            chains.add(chain);
        }
        assertEquals(List.of(1, 2, 3), List.of(groups.get(0).get("id").asInt(), groups.get(1).get("id").asInt(),
                groups.get(2).get("id").asInt()));
        assertEquals(List.of(
                List.of("storage-1", "storage-2", "storage-3"),
                List.of("storage-2", "storage-3", "storage-1"),
                List.of("storage-3", "storage-1", "storage-2")), chains);

        Reply nodes = http.get("/v1/nodes");
        assertEquals(200, nodes.status());
        JsonNode first = nodes.json().get("nodes").get(0);
        assertEquals(List.of("id", "host", "port", "live", "capacityBytes", "freeBytes", "labels", "state",
                "load"),
                fieldNames(first));
        assertEquals("storage-1", first.get("id").asText());
        assertEquals(100 * GIB, first.get("capacityBytes").asLong());
        assertEquals(60 * GIB, first.get("freeBytes").asLong());
    }

    @Test
    void nodeWithoutLiveZnodeIsListedAsDown() throws Exception {
        registerNodes(1);
        storageSide.delete().forPath(ZkPaths.live("storage-1"));
        JsonNode n = http.get("/v1/nodes").json().get("nodes").get(0);
        assertEquals("storage-1", n.get("id").asText());
        assertFalse(n.get("live").asBoolean());
    }

    @Test
    void allocateAssignsRotatingGroupsAndIsIdempotent() throws Exception {
        long volumeId = create("{\"name\":\"vol1\",\"size\":\"1G\"}").json().get("id").asLong();
        registerNodes(3);
        awaitGroups(3);
        for (int index = 0; index < 4; index++) {
            Reply r = http.post("/v1/volumes/vol1/chunks/" + index, "");
            assertEquals(200, r.status(), r.toString());
            assertEquals(index, r.json().get("index").asInt());
            assertTrue(r.json().get("allocated").asBoolean());
            int expectedGroup = (int) ((volumeId + index) % 3) + 1;
            assertEquals(expectedGroup, r.json().get("group").get("id").asInt());
            assertEquals(3, r.json().get("group").get("members").size());
            assertEquals(r.json(), http.post("/v1/volumes/vol1/chunks/" + index, "").json());
            assertEquals(r.json(), http.get("/v1/volumes/vol1/chunks/" + index).json());
        }
        assertEquals(4, http.get("/v1/volumes/vol1").json().get("allocatedChunks").asInt());
        assertEquals(4, http.get("/v1/volumes").json().get("volumes").get(0).get("allocatedChunks").asInt());

        Reply status = http.get("/v1/status");
        assertEquals(200, status.status());
        assertEquals(List.of("nodes", "groups", "volumes", "allocatedChunks", "capacity", "degradedGroups",
                "namenode", "down"), fieldNames(status.json()));
        assertEquals(3, status.json().get("nodes").size());
        assertEquals(3, status.json().get("groups").size());
        assertEquals(1, status.json().get("volumes").asInt());
        assertEquals(4, status.json().get("allocatedChunks").asInt());
    }

    @Test
    void concurrentAllocationOfOneChunkYieldsOneGroup() throws Exception {
        create("{\"name\":\"vol1\",\"size\":\"1G\"}");
        registerNodes(3);
        awaitGroups(3);
        List<Reply> replies = race(8, i -> http.post("/v1/volumes/vol1/chunks/9", ""));
        Set<JsonNode> groups = new HashSet<>();
        for (Reply r : replies) {
            assertEquals(200, r.status(), r.toString());
            groups.add(r.json().get("group"));
        }
        assertEquals(1, groups.size(), groups.toString());
        assertEquals(1, http.get("/v1/volumes/vol1").json().get("allocatedChunks").asInt());
    }

    @Test
    void deletedVolumeLosesItsChunkMap() throws Exception {
        create("{\"name\":\"vol1\",\"size\":\"1G\"}");
        registerNodes(3);
        awaitGroups(3);
        assertEquals(200, http.post("/v1/volumes/vol1/chunks/2", "").status());
        assertEquals(204, http.delete("/v1/volumes/vol1").status());
        assertEquals(null, storageSide.checkExists().forPath(ZkPaths.volume("vol1")));
        create("{\"name\":\"vol1\",\"size\":\"1G\"}");
        assertFalse(http.get("/v1/volumes/vol1/chunks/2").json().get("allocated").asBoolean());
        assertEquals(0, http.get("/v1/status").json().get("allocatedChunks").asInt());
    }

    /** Registers storage-1..n the way storage servers do: a persistent record and an ephemeral live znode. */
    private void registerNodes(int n) throws Exception {
        if (storageSide == null) {
            storageSide = CuratorFrameworkFactory.newClient(zkServer.getConnectString(), new RetryOneTime(100));
            storageSide.start();
            storageSide.blockUntilConnected();
        }
        for (int i = 1; i <= n; i++) {
            String id = "storage-" + i;
            NodeRecord record = new NodeRecord(id, "127.0.0.1", 9400 + i, 100 * GIB, 60 * GIB);
            storageSide.create().creatingParentsIfNeeded().forPath(ZkPaths.node(id), MetaJson.write(record));
            storageSide.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL)
                    .forPath(ZkPaths.live(id));
        }
    }

    /** Group formation reacts to a ZooKeeper watch, so it lands shortly after the nodes register. */
    private JsonNode awaitGroups(int expected) throws Exception {
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (true) {
            JsonNode groups = http.get("/v1/groups").json().get("groups");
            if (groups.size() == expected) {
                return groups;
            }
            assertTrue(groups.size() == 0, "unexpected groups " + groups);
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no groups formed within 20 s");
            }
            Thread.sleep(50);
        }
    }

    private static List<String> fieldNames(JsonNode n) {
        List<String> names = new ArrayList<>();
        Iterator<String> it = n.fieldNames();
        it.forEachRemaining(names::add);
        return names;
    }

    private static List<String> names(JsonNode volumes) {
        List<String> out = new ArrayList<>();
        volumes.forEach(v -> out.add(v.get("name").asText()));
        return out;
    }

    interface Task<T> {
        T run(int i) throws Exception;
    }

    private static <T> List<T> race(int n, Task<T> task) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<T>> futures = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                int id = i;
                Callable<T> c = () -> {
                    go.await();
                    return task.run(id);
                };
                futures.add(pool.submit(c));
            }
            go.countDown();
            List<T> out = new ArrayList<>();
            for (Future<T> f : futures) {
                out.add(f.get());
            }
            assertNotNull(out);
            return out;
        } finally {
            pool.shutdownNow();
        }
    }
}
