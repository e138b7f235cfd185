package io.fastblock.namenode.layers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.namenode.TestHttp;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.SnapshotRecord;
import io.fastblock.protocol.meta.VolumeFences;
import io.fastblock.protocol.meta.VolumeRecord;
import io.fastblock.protocol.meta.ZkPaths;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 of the namenode process while it creates snapshots as fast as it can: afterwards every
 * snapshot that exists is complete (its layers exist, its top is sealed, the volume's stack holds
 * them and one new layer per snapshot) and none exists half made, over several rounds.
 */
class SnapshotCrashIT {
    @TempDir
    Path dir;

    private static Process namenode(Path dir, String zk, CompletableFuture<String> ready) throws Exception {
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), "io.fastblock.namenode.NameNode",
                "--data-dir=" + dir, "--http-port=0", "--zk=" + zk, "--oversubscription=0", "--chunk-size=1M")
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
    void killingTheNamenodeDuringSnapshotsLeavesOnlyCompleteOnes() throws Exception {
        Random random = new Random(42);
        int attempted = 0;
        int made = 0;
        try (TestingServer zkServer = new TestingServer(true);
             CuratorFramework zk = CuratorFrameworkFactory.newClient(zkServer.getConnectString(), new RetryOneTime(100))) {
            zk.start();
            for (int round = 0; round < 5; round++) {
                CompletableFuture<String> url = new CompletableFuture<>();
                Process p = namenode(dir.resolve("nn"), zkServer.getConnectString(), url);
                try {
                    TestHttp http = new TestHttp(url.get(60, TimeUnit.SECONDS));
                    awaitLeader(http);
                    int before = snapshotCount(zk);
                    if (round == 0) {
                        assertEquals(201, http.post("/v1/volumes", "{\"name\":\"vol\",\"size\":\"1G\"}").status());
                        assertEquals(201, http.post("/v1/volumes", "{\"name\":\"other\",\"size\":\"1G\"}").status());
                    }
                    AtomicBoolean stop = new AtomicBoolean();
                    AtomicInteger sent = new AtomicInteger();
                    int base = round * 1000;
                    Thread client = new Thread(() -> {
                        for (int i = 0; !stop.get(); i++) {
                            try {
                                sent.incrementAndGet();
                                // Snapshots of one volume and clones of another interleave.
                                if (i % 3 == 2) {
                                    http.post("/v1/volumes", "{\"name\":\"c" + (base + i)
                                            + "\",\"source\":{\"volume\":\"other\"}}");
                                } else {
                                    http.post("/v1/volumes/vol/snapshots", "{\"name\":\"s" + (base + i) + "\"}");
                                }
                            } catch (Exception e) {
                                return; // the namenode died under the request
                            }
                        }
                    });
                    client.setDaemon(true);
                    client.start();
                    Thread.sleep(300 + random.nextInt(700));
                    p.destroyForcibly(); // SIGKILL: no shutdown hook, no clean close
                    p.waitFor(20, TimeUnit.SECONDS);
                    stop.set(true);
                    client.join(30_000);
                    attempted += sent.get();
                    made += snapshotCount(zk) - before;
                } finally {
                    p.destroyForcibly();
                    p.waitFor(20, TimeUnit.SECONDS);
                }
                checkComplete(zk, "vol");
                checkComplete(zk, "other");
            }
            // A namenode started afterwards serves what is there.
            CompletableFuture<String> url = new CompletableFuture<>();
            Process p = namenode(dir.resolve("nn"), zkServer.getConnectString(), url);
            try {
                TestHttp http = new TestHttp(url.get(60, TimeUnit.SECONDS));
                awaitLeader(http);
                assertTrue(made >= 5, "only " + made + " snapshots made in " + attempted + " requests");
                int listed = http.get("/v1/volumes/vol/snapshots").json().get("snapshots").size();
                assertEquals(zk.getChildren().forPath(ZkPaths.snapshots("vol")).size(), listed);
                assertTrue(listed > 0, "no snapshot was made in " + attempted + " attempts");
                assertEquals(201, http.post("/v1/volumes/vol/snapshots", "{\"name\":\"after\"}").status());
                checkComplete(zk, "vol");
            } finally {
                p.destroyForcibly();
                p.waitFor(20, TimeUnit.SECONDS);
            }
        }
    }

    private static int snapshotCount(CuratorFramework zk) throws Exception {
        return zk.checkExists().forPath(ZkPaths.snapshots("vol")) == null ? 0
                : zk.getChildren().forPath(ZkPaths.snapshots("vol")).size();
    }

    /** The killed namenode's leader latch lives until its session expires; wait for the new one to lead. */
    private static void awaitLeader(TestHttp http) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!http.get("/v1/status").json().get("namenode").get("leader").asBoolean()) {
            assertTrue(System.nanoTime() < deadline, "the namenode did not become leader within 60 s");
            Thread.sleep(100);
        }
    }

    /** Every snapshot complete; the stack holds exactly one layer more than the snapshots and clones-of-it took. */
    private static void checkComplete(CuratorFramework zk, String volume) throws Exception {
        VolumeRecord v = MetaJson.read(zk.getData().forPath(ZkPaths.volume(volume)), VolumeRecord.class);
        List<Long> stack = v.layerStack();
        Set<List<Long>> prefixes = new HashSet<>();
        List<String> snaps = zk.checkExists().forPath(ZkPaths.snapshots(volume)) == null ? List.of()
                : zk.getChildren().forPath(ZkPaths.snapshots(volume));
        for (String name : snaps) {
            SnapshotRecord s = MetaJson.read(zk.getData().forPath(ZkPaths.snapshot(volume, name)), SnapshotRecord.class);
            assertEquals(stack.subList(0, s.layers().size()), s.layers(), "snapshot " + name + " is a prefix of the stack");
            assertTrue(prefixes.add(s.layers()), "two snapshots with the same layers");
            assertEquals(VolumeFences.SEALED, VolumeFences.read(zk, s.topLayer()), "snapshot " + name + "'s top sealed");
        }
        // Every layer below the top was sealed by the transaction that pushed the next one.
        for (int i = 0; i < stack.size(); i++) {
            long layer = stack.get(i);
            if (v.layered()) {
                assertNotNull(zk.checkExists().forPath(ZkPaths.layerChunkMap(layer)), "layer " + layer + " of " + volume);
            }
            long fence = VolumeFences.read(zk, layer);
            assertEquals(i < stack.size() - 1, fence == VolumeFences.SEALED, "layer " + layer + " fence " + fence);
        }
        if (volume.equals("vol")) {
            // Only snapshots push layers onto vol: one per snapshot, so none was half made.
            assertEquals(snaps.size(), stack.size() - 1, "snapshots " + snaps + " vs stack " + stack);
        } else {
            // Only clones of it push layers onto other: one per clone that exists.
            long clones = 0;
            for (String name : zk.getChildren().forPath(ZkPaths.VOLUMES)) {
                VolumeRecord c = MetaJson.read(zk.getData().forPath(ZkPaths.volume(name)), VolumeRecord.class);
                if (c.source() != null && volume.equals(c.source().volume())) {
                    clones++;
                    assertEquals(stack.subList(0, c.layerStack().size() - 1),
                            c.layerStack().subList(0, c.layerStack().size() - 1), "clone " + name + " shares a prefix");
                }
            }
            assertEquals(clones, stack.size() - 1, "clones vs stack " + stack);
        }
        long counter = Long.parseLong(new String(zk.getData().forPath(ZkPaths.VOLUME_ID_COUNTER), StandardCharsets.US_ASCII));
        assertTrue(counter > stack.get(stack.size() - 1), "the id counter is past every layer id");
    }
}
