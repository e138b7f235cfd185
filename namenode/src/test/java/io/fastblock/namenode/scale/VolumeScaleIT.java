package io.fastblock.namenode.scale;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Scale of the metadata: thin volumes of 1 TiB created, listed and deleted through the REST API of
 * a real namenode on a real ZooKeeper. {@code make test} runs 250 of them to keep CI inside its
 * budget; the 1,000 run by hand with {@code -Dfastblock.scale.volumes=1000}. A thin volume must cost a few znodes, not one per
 * chunk (16,384 chunks of 64 MiB each here), and deletion must leave no volume behind. Prints the
 * create latency percentiles and the ZooKeeper data size (docs/metadata.md quotes them).
 */
class VolumeScaleIT {
    private static final int VOLUMES = Integer.getInteger("fastblock.scale.volumes", 250);
    private static final long TIB = 1L << 40;

    @TempDir
    Path dir;

    /** Znodes and bytes (data plus path names) under a subtree. */
    private record ZkSize(long znodes, long bytes) {
        ZkSize minus(ZkSize o) {
            return new ZkSize(znodes - o.znodes, bytes - o.bytes);
        }
    }

    private static ZkSize size(CuratorFramework zk, String path) throws Exception {
        Stat stat = zk.checkExists().forPath(path);
        if (stat == null) {
            return new ZkSize(0, 0);
        }
        long znodes = 1;
        long bytes = stat.getDataLength() + path.length();
        for (String child : zk.getChildren().forPath(path)) {
            ZkSize s = size(zk, path + "/" + child);
            znodes += s.znodes;
            bytes += s.bytes;
        }
        return new ZkSize(znodes, bytes);
    }

    @Test
    void thousandThinOneTebibyteVolumesAreCreatedListedAndDeleted() throws Exception {
        try (TestingServer zkServer = new TestingServer(true);
             CuratorFramework zk = CuratorFrameworkFactory.newClient(zkServer.getConnectString(), new RetryOneTime(100));
             NameNode namenode = NameNode.start(NameNodeConfig.fromArgs("--data-dir=" + dir, "--http-port=0",
                     "--zk=" + zkServer.getConnectString()))) {
            zk.start();
            // 3 x 400 TiB raw = 400 TiB usable, x4 over-subscription (the default) = 1,600 TiB provisionable.
            for (int i = 1; i <= 3; i++) {
                zk.create().creatingParentsIfNeeded().forPath(ZkPaths.node("s" + i),
                        MetaJson.write(new NodeRecord("s" + i, "127.0.0.1", 9400 + i, 400 * TIB, 400 * TIB)));
            }
            TestHttp http = new TestHttp(namenode.baseUrl());
            ZkSize before = size(zk, ZkPaths.ROOT);

            long[] createNanos = new long[VOLUMES];
            long t0 = System.nanoTime();
            for (int i = 0; i < VOLUMES; i++) {
                long start = System.nanoTime();
                Reply r = http.post("/v1/volumes", "{\"name\":\"scale-" + i + "\",\"size\":\"1T\",\"id\":\"client-" + i
                        + "\"}");
                createNanos[i] = System.nanoTime() - start;
                assertEquals(201, r.status(), r.toString());
            }
            long createAll = System.nanoTime() - t0;
            ZkSize full = size(zk, ZkPaths.ROOT);
            ZkSize volumes = size(zk, ZkPaths.VOLUMES);
            ZkSize added = full.minus(before);

            long listStart = System.nanoTime();
            Reply list = http.get("/v1/volumes");
            long listNanos = System.nanoTime() - listStart;
            assertEquals(200, list.status());
            Set<String> names = new HashSet<>();
            for (JsonNode v : list.json().get("volumes")) {
                assertEquals(TIB, v.get("size").asLong(), v.toString());
                assertEquals(0, v.get("allocatedChunks").asInt(), "thin: nothing allocated " + v);
                names.add(v.get("name").asText());
            }
            assertEquals(VOLUMES, names.size());
            JsonNode capacity = http.get("/v1/status").json().get("capacity");
            assertEquals(VOLUMES * TIB, capacity.get("provisioned").asLong(), capacity.toString());
            // A repeat of a create with its client id is answered from what exists.
            assertEquals(200, http.post("/v1/volumes", "{\"name\":\"scale-7\",\"size\":\"1T\",\"id\":\"client-7\"}")
                    .status());
            // Thin: a handful of znodes per volume, never one per chunk (16,384 chunks each).
            assertTrue(added.znodes() <= 4L * VOLUMES, "znodes added by " + VOLUMES + " volumes: " + added);

            System.out.printf("scale: %d thin volumes of 1 TiB: create p50 %.1f ms, p99 %.1f ms, max %.1f ms, all %.1f s;"
                            + " list of %d: %.0f ms%n", VOLUMES, ms(percentile(createNanos, 50)),
                    ms(percentile(createNanos, 99)), ms(percentile(createNanos, 100)), createAll / 1e9, VOLUMES,
                    ms(listNanos));
            System.out.printf("scale: ZooKeeper /fastblock: %d znodes, %d bytes before; %d znodes, %d bytes with %d"
                            + " volumes (%s under /fastblock/volumes); %.1f znodes and %.0f bytes per volume%n",
                    before.znodes(), before.bytes(), full.znodes(), full.bytes(), VOLUMES, volumes,
                    added.znodes() / (double) VOLUMES, added.bytes() / (double) VOLUMES);

            long[] deleteNanos = new long[VOLUMES];
            for (int i = 0; i < VOLUMES; i++) {
                long start = System.nanoTime();
                Reply r = http.delete("/v1/volumes/scale-" + i);
                deleteNanos[i] = System.nanoTime() - start;
                assertEquals(204, r.status(), r.toString());
            }
            System.out.printf("scale: delete p50 %.1f ms, p99 %.1f ms%n", ms(percentile(deleteNanos, 50)),
                    ms(percentile(deleteNanos, 99)));
            assertEquals(0, http.get("/v1/volumes").json().get("volumes").size());
            assertEquals(List.of(), zk.getChildren().forPath(ZkPaths.VOLUMES));
            assertEquals(List.of(), zk.getChildren().forPath(ZkPaths.CLIENT_IDS), "client ids released");
            // The leader's reclaimer removes the deleted volumes' layers in the background.
            long deadline = System.nanoTime() + 180_000_000_000L;
            while ((!zk.getChildren().forPath(ZkPaths.LAYERS).isEmpty()
                    || !zk.getChildren().forPath(ZkPaths.RECLAIM).isEmpty()) && System.nanoTime() < deadline) {
                Thread.sleep(200);
            }
            assertEquals(List.of(), zk.getChildren().forPath(ZkPaths.LAYERS), "every deleted layer reclaimed");
            assertEquals(List.of(), zk.getChildren().forPath(ZkPaths.RECLAIM), "every reclaim done");
            ZkSize after = size(zk, ZkPaths.ROOT);
            String sealed = new String(zk.getData().forPath(ZkPaths.SEALED_IDS), java.nio.charset.StandardCharsets.US_ASCII);
            System.out.printf("scale: after deleting them: %d znodes, %d bytes (%d before; seals moved to"
                    + " /fastblock/sealed-ids: \"%s\", %d fences left)%n", after.znodes(), after.bytes(),
                    before.znodes(), sealed.length() > 60 ? sealed.substring(0, 60) + "..." : sealed,
                    zk.getChildren().forPath(ZkPaths.FENCES).size());
            assertEquals(List.of(), zk.getChildren().forPath(ZkPaths.FENCES), "seals moved to the sealed ids");
            assertEquals(before.znodes() + 1, after.znodes(), "nothing left but the sealed-ids znode");
        }
    }

    private static long percentile(long[] values, int p) {
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        int idx = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, idx))];
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }
}
