package io.fastblock.local;

import static io.fastblock.local.VolumeChecks.MIB;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * Storage servers die and come back under a real cluster (all processes, namenode-driven chain
 * repair, catch-up): data written before, during and after the failures is what every initiator
 * read and every replica returns, including after the whole cluster restarts on its directory.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class NodeFailureIT {
    private static final long VOLUME = 256 * MIB;
    private static final int DATA = (int) (64 * MIB);

    @TempDir
    static Path dir;

    private static LocalClusterConfig config;
    private static LocalCluster cluster;
    private static byte[] current;

    @BeforeAll
    static void up() throws Exception {
        config = TestClusters.onFreePorts(dir.resolve("var"), "--chunk-size=16M", "--no-demo");
        cluster = LocalCluster.start(config, LocalCluster.defaultClasspath(), System.out);
        NamenodeAdmin admin = cluster.admin();
        assertEquals(201, admin.createVolume("vf", "256M", "16M").status());
        assertEquals(201, admin.createOpenExport("vf").status());
    }

    @AfterAll
    static void down() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static void writeNewPattern(long seed) throws Exception {
        byte[] p = new byte[DATA];
        new Random(seed).nextBytes(p);
        Path f = dir.resolve("pattern-" + seed + ".raw");
        Files.write(f, p);
        VolumeChecks.write(cluster, "vf", f);
        Files.delete(f);
        current = p;
    }

    @Test
    @Order(1)
    void dataWrittenWithAllReplicasReadsBack() throws Exception {
        writeNewPattern(1);
        VolumeChecks.assertReadsBack(cluster, "vf", current, VOLUME, dir);
        VolumeChecks.assertReplicasHold(cluster.admin(), "vf", current, 3);
    }

    @Test
    @Order(2)
    void oneServerKilledTheChainsShrinkAndWritesGoOn() throws Exception {
        cluster.processes().get("storage-3").kill();
        VolumeChecks.awaitGroups(cluster.admin(), g -> !VolumeChecks.hasMember(g, "storage-3"), 60,
                "storage-3 removed");
        writeNewPattern(2);
        VolumeChecks.assertReadsBack(cluster, "vf", current, VOLUME, dir);
        VolumeChecks.assertReplicasHold(cluster.admin(), "vf", current, 2);
    }

    @Test
    @Order(3)
    void theServerComesBackCatchesUpAndHoldsTheLatestData() throws Exception {
        cluster.restart("storage-3");
        VolumeChecks.awaitGroups(cluster.admin(), VolumeChecks::healed, 120, "3 members, nobody joining");
        VolumeChecks.assertReadsBack(cluster, "vf", current, VOLUME, dir);
        VolumeChecks.assertReplicasHold(cluster.admin(), "vf", current, 3);
    }

    @Test
    @Order(4)
    void aLoneSurvivorKeepsServingAndTheClusterRestartsWhole() throws Exception {
        cluster.processes().get("storage-2").kill();
        cluster.processes().get("storage-3").kill();
        VolumeChecks.awaitGroups(cluster.admin(), g -> g.get("members").size() == 1, 60, "storage-1 alone");
        writeNewPattern(3);
        VolumeChecks.assertReadsBack(cluster, "vf", current, VOLUME, dir);

        cluster.close();
        cluster = LocalCluster.start(config, LocalCluster.defaultClasspath(), System.out);
        VolumeChecks.awaitGroups(cluster.admin(), VolumeChecks::healed, 180, "3 members, nobody joining");
        VolumeChecks.assertReadsBack(cluster, "vf", current, VOLUME, dir);
        VolumeChecks.assertReplicasHold(cluster.admin(), "vf", current, 3);
    }
}
