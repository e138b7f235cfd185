package io.fastblock.local;

import static io.fastblock.local.VolumeChecks.MIB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.fastblock.bench.DirectionStats;
import io.fastblock.bench.JobSpec;
import io.fastblock.bench.LoadGenerator;
import io.fastblock.bench.Report;
import io.fastblock.bench.VolumeResult;
import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * A storage server is killed (kill -9) under sustained random load with verification, from the
 * bench load generator through the gateway, and comes back while the load goes on: no command
 * fails, none takes as long as an initiator's abort timer (15 s), every read returns the last
 * acknowledged write, and every written block reads back exactly at the end; once the chains have
 * healed, every replica holds the same bytes.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class FailureUnderLoadIT {
    private static final long CHUNK = 4 * MIB;
    private static final String SPAN = "64M";

    @TempDir(cleanup = org.junit.jupiter.api.io.CleanupMode.ON_SUCCESS)
    static Path dir;
    private static LocalCluster cluster;

    @BeforeAll
    static void up() throws Exception {
        LocalClusterConfig config = TestClusters.onFreePorts(dir.resolve("var"), "--chunk-size=4M", "--no-demo");
        cluster = LocalCluster.start(config, LocalCluster.defaultClasspath(), System.out);
        assertEquals(201, cluster.admin().createVolume("busy", "64M", "4M").status());
        assertEquals(201, cluster.admin().createOpenExport("busy").status());
    }

    @AfterAll
    static void down() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    @Order(1)
    void aServerKilledUnderRandomVerifiedLoadCostsNoErrorAndNoData() throws Exception {
        JobSpec spec = JobSpec.parse("--url", cluster.iscsiUrl("busy"), "--rw", "randrw", "--rwmixread", "50",
                "--bs", "4k", "--iodepth", "16", "--runtime", "40s", "--span", SPAN, "--seed", "9", "--verify",
                "--time-limit", "150s");
        CompletableFuture<Report> load = CompletableFuture.supplyAsync(() -> {
            try {
                return LoadGenerator.run(spec);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        Thread.sleep(10_000);
        assertTrue(!load.isDone(), "the load ended before the kill");
        cluster.processes().get("storage-2").kill();
        long killedAt = System.nanoTime();
        VolumeChecks.awaitGroups(cluster.admin(), g -> !VolumeChecks.hasMember(g, "storage-2"), 60,
                "storage-2 removed");
        System.out.printf("chains shrank %d ms after the kill%n", (System.nanoTime() - killedAt) / 1_000_000);
        Thread.sleep(5_000);
        cluster.restart("storage-2"); // rejoins and catches up while the load goes on
        Report report = load.get(180, TimeUnit.SECONDS);
        System.out.print(report.table());

        VolumeResult v = report.volumes().get(0);
        assertEquals(0, report.errors(), "the initiator saw errors:\n" + report.table());
        assertEquals(0, report.mismatches(), "wrong data:\n" + v.verify().mismatchSamples());
        for (DirectionStats d : new DirectionStats[] {v.read(), v.write()}) {
            assertTrue(d.ios() > 100, report.table());
            long maxMs = TimeUnit.NANOSECONDS.toMillis(d.latency().max());
            assertTrue(maxMs < 15_000, "a command took " + maxMs + " ms: an initiator would have aborted it");
        }
        // the generator reads back every block it wrote at the end; any difference is a mismatch (0 above)
        assertTrue(v.verify().readBack() > 0, "blocks were read back: " + v.verify());
        System.out.printf("under load across the kill: %d reads, %d writes, max latency %d / %d ms, %d blocks read "
                        + "back exactly%n", v.read().ios(), v.write().ios(),
                TimeUnit.NANOSECONDS.toMillis(v.read().latency().max()),
                TimeUnit.NANOSECONDS.toMillis(v.write().latency().max()), v.verify().readBack());

    }

    /**
     * Once the chains have healed, every replica of every chunk holds the same bytes (the server
     * that rejoined under load included).
     */
    @Test
    @Order(2)
    void replicasAgreeOnceTheChainsHeal() throws Exception {
        VolumeChecks.awaitGroups(cluster.admin(), VolumeChecks::healed, 180, "3 members, nobody joining");
        assertReplicasAgree("busy");
    }

    /** Every allocated chunk reads the same on each member of its chain, from the replicas' own copies. */
    private static void assertReplicasAgree(String volume) throws Exception {
        NamenodeAdmin admin = cluster.admin();
        JsonNode vol = admin.get("/v1/volumes/" + volume).body();
        long epoch = admin.get("/v1/volumes/" + volume + "/lease").body().get("epoch").asLong();
        int checked = 0;
        long disagreements = 0;
        for (int chunk = 0; chunk < 16; chunk++) {
            JsonNode lookup = admin.get("/v1/volumes/" + volume + "/chunks/" + chunk).body();
            if (!lookup.get("allocated").asBoolean()) {
                continue;
            }
            JsonNode group = lookup.get("group");
            ChainAddress chain = new ChainAddress(group.get("id").asInt(), group.get("chainVersion").asLong(), epoch);
            byte[] first = null;
            for (JsonNode m : group.get("members")) {
                byte[] copy = VolumeChecks.readReplica(m.get("host").asText(), m.get("port").asInt(), chain,
                        new ChunkId(vol.get("id").asLong(), chunk), (int) CHUNK);
                if (first == null) {
                    first = copy;
                } else {
                    int differing = 0;
                    for (int b = 0; b < CHUNK / 4096; b++) {
                        if (!java.util.Arrays.equals(first, b * 4096, (b + 1) * 4096, copy, b * 4096, (b + 1) * 4096)) {
                            differing++;
                        }
                    }
                    if (differing > 0) {
                        System.out.printf("replica %s of chunk %d: %d 4 KiB blocks differ from %s%n",
                                m.get("id").asText(), chunk, differing, group.get("members").get(0).get("id").asText());
                    }
                    disagreements += differing;
                }
            }
            checked++;
        }
        assertTrue(checked > 0, "no chunk was written");
        assertEquals(0, disagreements, "4 KiB blocks on which the replicas of a healed chain disagree");
    }
}
