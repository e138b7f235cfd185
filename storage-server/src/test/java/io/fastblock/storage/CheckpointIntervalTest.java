package io.fastblock.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.time.Duration;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --checkpoint-ms} and {@code --mapped-chunks} reach the chunk store of a started server (real ZooKeeper, real files). */
class CheckpointIntervalTest {
    @TempDir
    Path dir;

    @Test
    void theServersChunkStoreForcesAtTheConfiguredInterval() throws Exception {
        try (TestingServer zk = new TestingServer(true)) {
            for (String[] args : new String[][]{{}, {"--checkpoint-ms=1500"}}) {
                String[] all = new String[args.length + 4];
                all[0] = "--data-dir=" + dir.resolve("n" + args.length);
                all[1] = "--zk=" + zk.getConnectString();
                all[2] = "--port=0";
                all[3] = "--node-id=n" + args.length;
                System.arraycopy(args, 0, all, 4, args.length);
                StorageServerConfig config = StorageServerConfig.fromArgs(all);
                try (StorageServer server = StorageServer.start(config)) {
                    Duration expected = args.length == 0 ? Duration.ofSeconds(30) : Duration.ofMillis(1500);
                    assertEquals(expected, server.chunkStore().flushInterval());
                }
            }
        }
    }

    @Test
    void theMappedChunkLimitReachesTheStoreAndItsMetrics() throws Exception {
        try (TestingServer zk = new TestingServer(true);
             StorageServer server = StorageServer.start(StorageServerConfig.fromArgs("--data-dir=" + dir.resolve("m"),
                     "--zk=" + zk.getConnectString(), "--port=0", "--node-id=m", "--mapped-chunks=3"))) {
            assertEquals(3, server.chunkStore().mappings().limit());
            var registry = server.metrics().registry();
            assertEquals(0.0, registry.get("fastblock.chunk.mapped.files").gauge().value());
            assertEquals(0.0, registry.get("fastblock.chunk.mapped.evictions").functionCounter().count());
        }
    }
}
