package io.fastblock.namenode;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fastblock.namenode.TestHttp.Reply;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.NodeRecord;
import io.fastblock.protocol.meta.ZkPaths;
import java.io.IOException;
import java.net.ConnectException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The embedded ZooKeeper keeps all metadata in the data dir: a restart on the same dir brings it back. */
class NameNodeRestartTest {
    @TempDir
    Path dir;

    private NameNode start() throws Exception {
        return NameNode.start(NameNodeConfig.fromArgs("--data-dir=" + dir, "--http-port=0", "--zk-port=0", "--oversubscription=0"));
    }

    @Test
    void metadataSurvivesRestart() throws Exception {
        ObjectNode created;
        Reply chunk;
        int zkPort;
        int httpPort;
        try (NameNode first = start()) {
            assertTrue(first.zkPort() > 0);
            zkPort = first.zkPort();
            httpPort = first.httpPort();
            TestHttp http = new TestHttp(first.baseUrl());
            Reply r = http.post("/v1/volumes", "{\"name\":\"keep\",\"size\":\"10G\"}");
            assertEquals(201, r.status(), r.toString());
            created = (ObjectNode) r.json();
            // Storage servers register in the embedded ZooKeeper like in any other.
            try (CuratorFramework storage = CuratorFrameworkFactory.newClient(first.zkConnect(), new RetryOneTime(100))) {
                storage.start();
                storage.blockUntilConnected();
                for (int i = 1; i <= 3; i++) {
                    String id = "storage-" + i;
                    storage.create().forPath(ZkPaths.node(id),
                            MetaJson.write(new NodeRecord(id, "127.0.0.1", 9400 + i, 1L << 40, 1L << 40)));
                    storage.create().withMode(CreateMode.EPHEMERAL).forPath(ZkPaths.live(id));
                }
                long deadline = System.nanoTime() + 20_000_000_000L;
                while (http.get("/v1/groups").json().get("groups").size() < 3 && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                chunk = http.post("/v1/volumes/keep/chunks/7", "");
                assertEquals(200, chunk.status(), chunk.toString());
            }
        }
        assertTrue(Files.isDirectory(dir.resolve("zookeeper")));
        assertRefused(httpPort);
        assertRefused(zkPort);

        try (NameNode second = start()) {
            TestHttp http = new TestHttp(second.baseUrl());
            Reply got = http.get("/v1/volumes/keep");
            assertEquals(200, got.status(), got.toString());
            ObjectNode expected = created.deepCopy();
            expected.put("allocatedChunks", 1);
            assertEquals(expected, got.json());
            assertEquals(1, got.json().get("id").asLong());
            // Groups and chunk assignments came back; the storage servers' sessions did not (ephemeral).
            Reply again = http.get("/v1/volumes/keep/chunks/7");
            assertEquals(chunk.json().get("group").get("id"), again.json().get("group").get("id"));
            assertEquals(3, http.get("/v1/groups").json().get("groups").size());
            for (JsonNode n : http.get("/v1/nodes").json().get("nodes")) {
                assertFalse(n.get("live").asBoolean(), n.toString());
            }
            // The id counter survived too: the next volume does not reuse id 1.
            assertEquals(2, http.post("/v1/volumes", "{\"name\":\"next\",\"size\":\"1G\"}").json().get("id").asLong());
        }
    }

    /** After close, both the REST and the ZooKeeper port are released. */
    private static void assertRefused(int port) {
        try (Socket s = new Socket("127.0.0.1", port)) {
            throw new AssertionError("port " + port + " still accepts connections after close (from "
                    + s.getLocalPort() + ")");
        } catch (ConnectException expected) {
            // closed as it should be
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }
}
