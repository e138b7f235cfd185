package io.fastblock.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.bench.JobSpec;
import io.fastblock.bench.LoadGenerator;
import io.fastblock.bench.Report;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Per-volume QoS through the real gateway, measured with the bench load generator: a volume
 * limited to 500 IOPS delivers 500 IOPS within 5 % over 10 s, an unlimited one is not held to it,
 * and a limit changed on the namenode (PATCH) applies to a session that stays logged in.
 */
class QosIT {
    @TempDir
    static Path dir;
    private static LocalCluster cluster;

    @BeforeAll
    static void up() throws Exception {
        LocalClusterConfig config = TestClusters.onFreePorts(dir.resolve("var"), "--chunk-size=4M", "--no-demo");
        cluster = LocalCluster.start(config, LocalCluster.defaultClasspath(), System.out);
        NamenodeAdmin admin = cluster.admin();
        assertEquals(201, admin.post("/v1/volumes", Map.of("name", "limited", "size", "64M", "chunkSize", 4 << 20,
                "qos", Map.of("totalIopsSec", 500))).status());
        assertEquals(201, admin.createVolume("free", "64M", "4M").status());
        assertEquals(201, admin.createOpenExport("limited").status());
        assertEquals(201, admin.createOpenExport("free").status());
    }

    @AfterAll
    static void down() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static double readIops(String volume, String runtime, String ramp) throws Exception {
        Report r = LoadGenerator.run(JobSpec.parse("--url", cluster.iscsiUrl(volume), "--rw", "randread", "--bs", "4k",
                "--iodepth", "16", "--runtime", runtime, "--ramp", ramp, "--seed", "3"));
        System.out.print(r.table());
        assertEquals(0, r.errors(), r.table());
        return r.total(true).ios() * 1e9 / r.volumes().get(0).measuredNanos();
    }

    @Test
    void limitsHoldTheRateUnlimitedVolumesAreNotSlowedAndChangesApplyWithoutReLogin() throws Exception {
        double limited = readIops("limited", "10s", "2s");
        double free = readIops("free", "5s", "1s");
        System.out.printf("QoS: limited to 500 IOPS: %.1f IOPS; unlimited: %.1f IOPS%n", limited, free);
        assertEquals(500, limited, 25, "within 5 % of the limit");
        assertTrue(free > 1.5 * 500, "an unlimited volume is not held to another's limit: " + free);

        // Lowered on the namenode one second into a session; measured after the poll period.
        CompletableFuture<Integer> patched = CompletableFuture.supplyAsync(() -> {
            try {
                Thread.sleep(1000);
                return cluster.admin().patch("/v1/volumes/limited", Map.of("qos", Map.of("totalIopsSec", 250)))
                        .status();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        double lowered = readIops("limited", "10s", "5s");
        assertEquals(200, patched.get(10, TimeUnit.SECONDS));
        System.out.printf("QoS: lowered to 250 IOPS in session: %.1f IOPS%n", lowered);
        assertEquals(250, lowered, 12.5, "the new limit, without a re-login");
    }
}
