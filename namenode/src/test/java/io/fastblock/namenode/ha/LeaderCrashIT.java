package io.fastblock.namenode.ha;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.namenode.TestHttp;
import io.fastblock.namenode.TestHttp.Reply;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two namenode processes on a 3-server ZooKeeper ensemble; the leader is killed with SIGKILL (no
 * clean handoff: its session must expire). The other leads and serves writes within 10 s, and
 * everything written through the dead leader is there.
 */
class LeaderCrashIT {
    @TempDir
    Path dir;

    private static Process namenode(Path dir, String zk, CompletableFuture<String> ready) throws Exception {
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), "io.fastblock.namenode.NameNode",
                "--data-dir=" + dir, "--http-port=0", "--zk=" + zk, "--oversubscription=0")
                .redirectErrorStream(true).start();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    if (line.startsWith("READY namenode ")) {
                        ready.complete(line.substring("READY namenode ".length()).trim());
                    }
                }
            } catch (Exception ignored) {
                // process gone
            }
            ready.completeExceptionally(new IllegalStateException("namenode exited before READY"));
        });
        reader.setDaemon(true);
        reader.start();
        return p;
    }

    @Test
    void killingTheLeaderProcessHandsOverWithinTenSeconds() throws Exception {
        List<Process> started = new ArrayList<>();
        try (TestingCluster ensemble = Ensembles.of(3)) {
            ensemble.start();
            CompletableFuture<String> urlA = new CompletableFuture<>();
            CompletableFuture<String> urlB = new CompletableFuture<>();
            Process a = namenode(dir.resolve("a"), ensemble.getConnectString(), urlA);
            started.add(a);
            String baseA = urlA.get(60, TimeUnit.SECONDS);
            Process b = namenode(dir.resolve("b"), ensemble.getConnectString(), urlB);
            started.add(b);
            String baseB = urlB.get(60, TimeUnit.SECONDS);
            TestHttp httpA = new TestHttp(baseA);
            TestHttp httpB = new TestHttp(baseB);
            // a started first and leads.
            assertTrue(httpA.get("/v1/status").json().get("namenode").get("leader").asBoolean());
            for (int i = 0; i < 20; i++) {
                assertEquals(201, httpA.post("/v1/volumes", "{\"name\":\"v" + i + "\",\"size\":\"1G\"}").status());
            }
            assertEquals(307, httpB.post("/v1/volumes", "{\"name\":\"x\",\"size\":\"1G\"}").status());

            a.destroyForcibly();
            long killedAt = System.nanoTime();
            assertTrue(a.waitFor(10, TimeUnit.SECONDS));
            Reply r = null;
            while (System.nanoTime() - killedAt < Duration.ofSeconds(10).toNanos()) {
                r = httpB.post("/v1/volumes", "{\"name\":\"after\",\"size\":\"1G\",\"id\":\"after\"}");
                if (r.status() == 201 || r.status() == 200) {
                    break;
                }
                Thread.sleep(100);
            }
            assertNotNull(r);
            assertTrue(r.status() == 201 || r.status() == 200, "no write served within 10 s of the kill: " + r);
            System.out.println("leader namenode SIGKILLed: writes served by the other after "
                    + (System.nanoTime() - killedAt) / 1_000_000 + " ms");
            assertEquals(21, httpB.get("/v1/volumes").json().get("volumes").size());
        } finally {
            for (Process p : started) {
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }
}
