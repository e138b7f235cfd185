package io.fastblock.local;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.codec.BufferPoolDefaults;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code make up ARGS=--storage-jvm=shared}: the three storage servers in one JVM still form the
 * cluster's replication groups, and a third-party initiator's data goes through them and back.
 */
class SharedStorageJvmIT {
    @TempDir
    Path dir;

    @Test
    void threeServersInOneJvmServeTheDemoVolume() throws Exception {
        LocalClusterConfig config = TestClusters.onFreePorts(dir.resolve("var"), "--storage-jvm=shared",
                "--chunk-size=16M", "--demo-size=256M");
        try (LocalCluster cluster = LocalCluster.start(config, LocalCluster.defaultClasspath(), System.out)) {
            assertEquals(List.of("namenode", LocalCluster.STORAGE_GROUP, "gateway"), List.copyOf(cluster.processes().keySet()));
            ChildProcess storage = cluster.processes().get(LocalCluster.STORAGE_GROUP);
            List<String> jvmArgs = List.of(ProcessHandle.of(storage.pid()).orElseThrow().info().arguments().orElseThrow());
            assertTrue(jvmArgs.contains("-Xmx768m") && jvmArgs.contains("-XX:+UseParallelGC")
                    && jvmArgs.containsAll(BufferPoolDefaults.JVM_OPTIONS)
                    && jvmArgs.contains("io.fastblock.storage.StorageServerGroup"), jvmArgs.toString());
            assertFalse(Files.readString(storage.logFile()).contains("zeroed memory"), "the group's pools take zeroed memory");
            // start() returned, so the namenode saw 3 live servers formed into groups; each chain spans three nodes.
            assertTrue(cluster.admin().clusterFormed(3));

            // 40 MiB crosses chunks, so writes go to more than one chain.
            byte[] image = new byte[40 << 20];
            new Random(20261127).nextBytes(image);
            Path in = dir.resolve("in.raw");
            Path out = dir.resolve("out.raw");
            Files.write(in, image);
            String url = cluster.iscsiUrl("demo");
            ExternalCommand.ok(180, "qemu-img", "convert", "-n", "-f", "raw", "-O", "raw", in.toString(), url);
            ExternalCommand.ok(180, "qemu-img", "convert", "-f", "raw", "-O", "raw", url, out.toString());
            byte[] back = Files.readAllBytes(out);
            assertEquals(256 << 20, back.length);
            assertArrayEquals(image, java.util.Arrays.copyOf(back, image.length));
        }
    }
}
