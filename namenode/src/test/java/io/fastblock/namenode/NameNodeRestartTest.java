package io.fastblock.namenode;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.fastblock.namenode.TestHttp.Reply;
import java.io.IOException;
import java.net.ConnectException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The embedded ZooKeeper keeps all metadata in the data dir: a restart on the same dir brings it back. */
class NameNodeRestartTest {
    @TempDir
    Path dir;

    private NameNode start() throws Exception {
        return NameNode.start(NameNodeConfig.fromArgs("--data-dir=" + dir, "--http-port=0", "--zk-port=0"));
    }

    @Test
    void volumesSurviveRestart() throws Exception {
        JsonNode created;
        int zkPort;
        int httpPort;
        try (NameNode first = start()) {
            assertTrue(first.zkPort() > 0);
            zkPort = first.zkPort();
            httpPort = first.httpPort();
            TestHttp http = new TestHttp(first.baseUrl());
            Reply r = http.post("/v1/volumes", "{\"name\":\"keep\",\"size\":\"10G\"}");
            assertEquals(201, r.status(), r.toString());
            created = r.json();
        }
        assertTrue(Files.isDirectory(dir.resolve("zookeeper")));
        assertRefused(httpPort);
        assertRefused(zkPort);

        try (NameNode second = start()) {
            TestHttp http = new TestHttp(second.baseUrl());
            Reply got = http.get("/v1/volumes/keep");
            assertEquals(200, got.status(), got.toString());
            assertEquals(created, got.json());
            assertEquals(1, got.json().get("id").asLong());
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
