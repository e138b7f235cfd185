package io.fastblock.local;

import static io.fastblock.local.VolumeChecks.MIB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Snapshots, clones and revert on a real cluster (separate processes, qemu-img / qemu-io through
 * iscsi://): write A, snapshot, write B (unaligned, across chunk boundaries, sub-4 KiB); the volume
 * reads B, a clone of the snapshot reads A, revert gives A again; and the same after kill -9 of
 * every process and a restart on the same directory.
 */
class SnapshotIT {
    private static final long CHUNK = MIB;
    private static final int SIZE = (int) (8 * MIB);

    /** Under target/ so the servers' logs stay for a look after a failure. */
    private static final Path dir = Path.of("target", "snapshot-it").toAbsolutePath();
    private static LocalClusterConfig config;
    private static LocalCluster cluster;

    @BeforeAll
    static void up() throws Exception {
        if (Files.exists(dir)) {
            try (var paths = Files.walk(dir)) {
                paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
        Files.createDirectories(dir);
        config = TestClusters.onFreePorts(dir.resolve("var"), "--chunk-size=1M", "--no-demo");
        cluster = LocalCluster.start(config, LocalCluster.defaultClasspath(), System.out);
    }

    @AfterAll
    static void down() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static void create(String name) throws Exception {
        assertEquals(201, cluster.admin().createVolume(name, "8M", "1M").status());
        assertEquals(201, cluster.admin().createOpenExport(name).status());
    }

    /** qemu-io writes {@code length} bytes of {@code value} at {@code offset}; the same into {@code expected}. */
    private static void fill(String volume, byte[] expected, long offset, int length, int value) throws Exception {
        ExternalCommand.ok(120, "qemu-io", "-f", "raw", "-c", "write -P " + value + " " + offset + " " + length,
                cluster.iscsiUrl(volume));
        Arrays.fill(expected, (int) offset, (int) offset + length, (byte) value);
    }

    private static void assertReads(String volume, byte[] expected) throws Exception {
        VolumeChecks.assertReadsBack(cluster, volume, expected, SIZE, dir);
    }

    @Test
    void snapshotCloneAndRevertAcrossChunksAndAfterKillingEverything() throws Exception {
        create("vol");
        byte[] a = new byte[SIZE];
        new Random(11).nextBytes(a);
        Path f = dir.resolve("a.raw");
        Files.write(f, a);
        VolumeChecks.write(cluster, "vol", f);

        NamenodeAdmin admin = cluster.admin();
        NamenodeAdmin.Reply snap = admin.post("/v1/volumes/vol/snapshots", Map.of("name", "s1"));
        assertEquals(201, snap.status(), String.valueOf(snap.body()));

        byte[] b = a.clone();
        fill("vol", b, CHUNK - 512, 10 * 1024, 0x5a);       // across the chunk 0/1 boundary, not 4 KiB aligned
        fill("vol", b, 3072, 512, 0x33);                     // sub-4 KiB inside a block the snapshot holds
        fill("vol", b, 4 * CHUNK, (int) CHUNK, 0x44);        // a whole chunk
        fill("vol", b, SIZE - 1024, 1024, 0x21);             // the last block's tail
        fill("vol", b, 5 * CHUNK, 512, 0x19);                // aligned start, partial end
        fill("vol", b, 6 * CHUNK + 3584, 4608, 0x1c);        // partial start, aligned end
        assertReads("vol", b);

        NamenodeAdmin.Reply clone = admin.post("/v1/volumes", Map.of("name", "c1",
                "source", Map.of("snapshot", "vol/s1")));
        assertEquals(201, clone.status(), String.valueOf(clone.body()));
        assertEquals(201, admin.createOpenExport("c1").status());
        assertReads("c1", a);

        byte[] c = a.clone();
        fill("c1", c, 0, 4096, 0x77);                        // the clone's writes stay its own
        assertReads("c1", c);
        assertReads("vol", b);

        NamenodeAdmin.Reply revert = admin.post("/v1/volumes/vol/revert", Map.of("snapshot", "s1"));
        assertEquals(200, revert.status(), String.valueOf(revert.body()));
        assertReads("vol", a);
        byte[] after = a.clone();
        fill("vol", after, 2 * CHUNK + 1536, 2048, 0x66);    // writes after the revert go to the new top
        assertReads("vol", after);
        assertReads("c1", c);

        // Power cut: every process at once, then the whole cluster again on the same directory.
        cluster.killAll();
        cluster.close();
        cluster = LocalCluster.start(config, LocalCluster.defaultClasspath(), System.out);
        VolumeChecks.awaitGroups(cluster.admin(), g -> g.get("members").size() >= 1
                && g.get("members").get(0).get("live").asBoolean(), 120, "a live head in every group");
        assertReads("vol", after);
        assertReads("c1", c);
        NamenodeAdmin.Reply s1 = cluster.admin().get("/v1/volumes/vol/snapshots/s1");
        assertEquals(200, s1.status());
        NamenodeAdmin.Reply clone2 = cluster.admin().post("/v1/volumes", Map.of("name", "c2",
                "source", Map.of("snapshot", "vol/s1")));
        assertEquals(201, clone2.status(), String.valueOf(clone2.body()));
        assertEquals(201, cluster.admin().createOpenExport("c2").status());
        assertReads("c2", a);
        assertTrue(cluster.admin().get("/v1/volumes/vol").body().get("layers").size() >= 2);
        VolumeChecks.awaitGroups(cluster.admin(), VolumeChecks::healed, 180, "3 members, nobody joining");
    }
}
