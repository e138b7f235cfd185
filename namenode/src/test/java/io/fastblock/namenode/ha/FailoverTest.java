package io.fastblock.namenode.ha;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.fastblock.namenode.NameNode;
import io.fastblock.namenode.NameNodeConfig;
import io.fastblock.namenode.TestHttp;
import io.fastblock.namenode.TestHttp.Reply;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two namenodes on a real 3-server ZooKeeper ensemble: one leads, the standby redirects writes to
 * it and serves reads; closing the leader hands leadership over within seconds with nothing lost;
 * losing the ZooKeeper ensemble's own leader is survived.
 */
class FailoverTest {
    @TempDir
    Path dir;

    private static NameNode start(Path dir, String zk) throws Exception {
        return NameNode.start(NameNodeConfig.fromArgs("--data-dir=" + dir, "--http-port=0", "--zk=" + zk,
                "--oversubscription=0"));
    }

    @Test
    void standbyRedirectsThenTakesOverWhenTheLeaderGoes() throws Exception {
        try (TestingCluster ensemble = Ensembles.of(3)) {
            ensemble.start();
            String zk = ensemble.getConnectString();
            NameNode first = start(dir.resolve("a"), zk);
            NameNode second = start(dir.resolve("b"), zk);
            try {
                NameNode leader = first.isLeader() ? first : second;
                NameNode standby = leader == first ? second : first;
                assertTrue(leader.isLeader());
                assertFalse(standby.isLeader());
                assertEquals(leader.baseUrl(), standby.leadership().leaderUrl().orElseThrow());

                // A standby sends writes to the leader with a 307; a client that follows it creates there.
                TestHttp noFollow = new TestHttp(standby.baseUrl());
                Reply redirect = noFollow.post("/v1/volumes", "{\"name\":\"v1\",\"size\":\"1G\"}");
                assertEquals(307, redirect.status(), redirect.toString());
                assertEquals("NOT_LEADER", redirect.code());
                assertEquals(leader.baseUrl() + "/v1/volumes", redirect.raw().headers().firstValue("Location").orElseThrow());
                TestHttp following = new TestHttp(standby.baseUrl(), null, HttpClient.newBuilder()
                        .followRedirects(HttpClient.Redirect.NORMAL).connectTimeout(Duration.ofSeconds(5)).build());
                Reply created = following.post("/v1/volumes", "{\"name\":\"v1\",\"size\":\"1G\",\"id\":\"c1\"}");
                assertEquals(201, created.status(), created.toString());
                // Reads are served by the standby itself.
                Reply read = noFollow.get("/v1/volumes/v1");
                assertEquals(200, read.status());
                JsonNode status = noFollow.get("/v1/status").json().get("namenode");
                assertFalse(status.get("leader").asBoolean());
                assertEquals(leader.baseUrl(), status.get("leaderUrl").asText());

                long closedAt = System.nanoTime();
                leader.close();
                long deadline = closedAt + Duration.ofSeconds(10).toNanos();
                while (!standby.isLeader() && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                assertTrue(standby.isLeader(), "standby did not take over within 10 s");
                long tookMs = (System.nanoTime() - closedAt) / 1_000_000;
                System.out.println("namenode failover (leader closed): standby leads after " + tookMs + " ms");
                assertEquals(201, noFollow.post("/v1/volumes", "{\"name\":\"v2\",\"size\":\"1G\"}").status());
                JsonNode v1 = noFollow.get("/v1/volumes/v1").json();
                assertEquals("c1", v1.get("clientId").asText(), "metadata written through the old leader survives");
                assertEquals(200, noFollow.post("/v1/volumes", "{\"name\":\"v1\",\"size\":\"1G\",\"id\":\"c1\"}").status());
            } finally {
                first.close();
                second.close();
            }
        }
    }

    @Test
    void losingTheZooKeeperLeaderIsSurvived() throws Exception {
        try (TestingCluster ensemble = Ensembles.of(3)) {
            ensemble.start();
            NameNode nn = start(dir.resolve("a"), ensemble.getConnectString());
            try {
                TestHttp http = new TestHttp(nn.baseUrl());
                assertEquals(201, http.post("/v1/volumes", "{\"name\":\"before\",\"size\":\"1G\"}").status());
                InstanceSpec zkLeader = Ensembles.leader(ensemble);
                assertNotNull(zkLeader, "no ZooKeeper leader found");
                assertTrue(ensemble.killServer(zkLeader));
                long killedAt = System.nanoTime();
                Reply after = null;
                while (System.nanoTime() - killedAt < Duration.ofSeconds(20).toNanos()) {
                    after = http.post("/v1/volumes", "{\"name\":\"after\",\"size\":\"1G\",\"id\":\"after-1\"}");
                    if (after.status() == 201 || after.status() == 200) {
                        break;
                    }
                    Thread.sleep(100);
                }
                assertNotNull(after);
                assertTrue(after.status() == 201 || after.status() == 200, after.toString());
                System.out.println("ZooKeeper leader lost: writes served again after "
                        + (System.nanoTime() - killedAt) / 1_000_000 + " ms");
                assertEquals(200, http.get("/v1/volumes/before").status());
                assertTrue(nn.isLeader());
            } finally {
                nn.close();
            }
        }
    }
}
