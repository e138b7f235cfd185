package io.fastblock.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StorageServerConfigTest {
    @TempDir
    Path dir;

    @Test
    void defaults() {
        StorageServerConfig c = StorageServerConfig.fromArgs();
        assertNull(c.nodeId());
        assertEquals(Path.of("./var/storage-1"), c.dataDir());
        assertEquals("127.0.0.1", c.listen());
        assertEquals(9401, c.port());
        assertEquals("127.0.0.1:2181", c.zk());
        assertEquals(64L << 20, c.segmentSize());
        assertEquals(5000, c.zkSessionTimeoutMs());
    }

    @Test
    void zkSessionTimeoutIsAFlagWithAFloor() {
        assertEquals(8000, StorageServerConfig.fromArgs("--zk-session-timeout-ms=8000").zkSessionTimeoutMs());
        assertEquals(8000, StorageServerConfig.fromArgs("--zk-session-timeout-ms=8000").withPort(1).zkSessionTimeoutMs());
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> StorageServerConfig.fromArgs("--zk-session-timeout-ms=10")).getMessage()
                .contains("--zk-session-timeout-ms"));
    }

    @Test
    void chunkIoThreadsAreAFlagWithBounds() {
        assertEquals(StorageServerConfig.DEFAULT_IO_THREADS, StorageServerConfig.fromArgs().ioThreads());
        assertEquals(3, StorageServerConfig.fromArgs("--io-threads=3").ioThreads());
        assertEquals(3, StorageServerConfig.fromArgs("--io-threads=3").withPort(1).ioThreads());
        for (String bad : new String[] {"--io-threads=0", "--io-threads=65"}) {
            assertTrue(assertThrows(IllegalArgumentException.class, () -> StorageServerConfig.fromArgs(bad))
                    .getMessage().contains("--io-threads must be 1..64"), bad);
        }
    }

    @Test
    void networkEventLoopsAreAFlagWithBounds() {
        assertEquals(1, StorageServerConfig.fromArgs().networkThreads());
        assertEquals(2, StorageServerConfig.fromArgs("--network-threads=2").networkThreads());
        assertEquals(2, StorageServerConfig.fromArgs("--network-threads=2").withPort(1).networkThreads());
        assertEquals(2, StorageServerConfig.fromArgs("--network-threads=2").withBackground(BackgroundRates.DEFAULTS).networkThreads());
        for (String bad : new String[] {"--network-threads=0", "--network-threads=65"}) {
            assertTrue(assertThrows(IllegalArgumentException.class, () -> StorageServerConfig.fromArgs(bad))
                    .getMessage().contains("--network-threads must be 1..64, got"), bad);
        }
    }

    @Test
    void logCleanTargetIsAShareWithBounds() {
        assertEquals(0.5, StorageServerConfig.fromArgs().logCleanTarget());
        assertEquals(0.5, StorageServerConfig.fromArgs().cleanerSettings().targetUtilisation());
        assertEquals(0.85, StorageServerConfig.fromArgs().cleanerSettings().pressureUtilisation());
        assertEquals(0.7, StorageServerConfig.fromArgs("--log-clean-target=0.7").logCleanTarget());
        assertEquals(0.7, StorageServerConfig.fromArgs("--log-clean-target=70%").withPort(1).logCleanTarget(), 1e-12);
        assertEquals(0.9, StorageServerConfig.fromArgs("--log-clean-target=0.9").withBackground(BackgroundRates.DEFAULTS)
                .cleanerSettings().pressureUtilisation(), "never a laxer target under pressure");
        for (String bad : new String[] {"--log-clean-target=0", "--log-clean-target=1.5", "--log-clean-target=half",
                "--log-clean-target=150%"}) {
            String message = assertThrows(IllegalArgumentException.class, () -> StorageServerConfig.fromArgs(bad)).getMessage();
            assertTrue(message.contains("--log-clean-target must be a share in (0, 1]") && message.contains(bad.substring(19)),
                    bad + ": " + message);
        }
    }

    @Test
    void logDirectIoIsOnByDefaultAndCanBeTurnedOff() {
        assertTrue(StorageServerConfig.fromArgs().logDirectIo());
        assertFalse(StorageServerConfig.fromArgs("--log-direct-io=false").logDirectIo());
        assertFalse(StorageServerConfig.fromArgs("--log-direct-io=no").withPort(1).withBackground(BackgroundRates.DEFAULTS)
                .logDirectIo());
        String message = assertThrows(IllegalArgumentException.class,
                () -> StorageServerConfig.fromArgs("--log-direct-io=maybe")).getMessage();
        assertTrue(message.contains("--log-direct-io must be true or false, got 'maybe'"), message);
    }

    @Test
    void checkpointIntervalIsAFlagWithAFloorThatTheWithersKeep() {
        assertEquals(Duration.ofSeconds(30), StorageServerConfig.fromArgs().checkpointInterval());
        StorageServerConfig c = StorageServerConfig.fromArgs("--checkpoint-ms=5000");
        assertEquals(5000, c.checkpointMillis());
        assertEquals(5000, c.withPort(1).withBackground(BackgroundRates.DEFAULTS).checkpointMillis());
        String message = assertThrows(IllegalArgumentException.class,
                () -> StorageServerConfig.fromArgs("--checkpoint-ms=99")).getMessage();
        assertTrue(message.contains("--checkpoint-ms must be at least 100, got 99"), message);
    }

    @Test
    void mappedChunksIsAFlagThatTheWithersKeep() {
        assertEquals(io.fastblock.storage.io.MappingBudget.defaultLimit(), StorageServerConfig.fromArgs().mappedChunks());
        StorageServerConfig c = StorageServerConfig.fromArgs("--mapped-chunks=0");
        assertEquals(0, c.mappedChunks());
        assertEquals(0, c.withPort(1).withBackground(BackgroundRates.DEFAULTS).mappedChunks());
        String message = assertThrows(IllegalArgumentException.class,
                () -> StorageServerConfig.fromArgs("--mapped-chunks=-1")).getMessage();
        assertTrue(message.contains("--mapped-chunks must be 0 (no mapped reads) or more, got -1"), message);
    }

    @Test
    void failureDomainLabelsAndHeartbeatPeriod() {
        StorageServerConfig c = StorageServerConfig.fromArgs("--rack-label=r2", "--host-label=h7", "--heartbeat-ms=500");
        assertEquals(java.util.Map.of("rack", "r2", "host", "h7"), c.labels());
        assertEquals(c.labels(), c.withPort(1).labels());
        assertEquals(500, c.withPort(1).heartbeatMillis());
        assertEquals(java.util.Map.of(), StorageServerConfig.fromArgs().labels(), "no labels: its own host and rack");
        assertEquals(StorageServerConfig.DEFAULT_HEARTBEAT_MS, StorageServerConfig.fromArgs().heartbeatMillis());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> StorageServerConfig.fromArgs("--heartbeat-ms=5"))
                .getMessage().contains("--heartbeat-ms"));
    }

    @Test
    void flagsAndSizeSuffixes() {
        StorageServerConfig c = StorageServerConfig.fromArgs("--node-id=s2", "--data-dir", "/tmp/x", "--port=9402",
                "--segment-size=64MiB", "--zk=zk:2181");
        assertEquals("s2", c.nodeId());
        assertEquals(64L << 20, c.segmentSize());
        assertEquals(1L << 30, StorageServerConfig.fromArgs("--segment-size=1G").segmentSize());
        assertEquals(8192, StorageServerConfig.fromArgs("--segment-size=8192").segmentSize());
    }

    @Test
    void badFlagsAreNamed() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> StorageServerConfig.fromArgs("--segment-size=lots"))
                .getMessage().contains("--segment-size"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> StorageServerConfig.fromArgs("--segment-size=100"))
                .getMessage().contains("at least"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> StorageServerConfig.fromArgs("--prot=1"))
                .getMessage().contains("--prot"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> StorageServerConfig.fromArgs("--node-id=a/b"))
                .getMessage().contains("node id"));
    }

    @Test
    void nodeIdIsStoredAndAMismatchIsRefused() throws Exception {
        String generated = NodeIdentity.resolve(dir, null);
        assertTrue(generated.startsWith("storage-"));
        assertEquals(generated, Files.readString(dir.resolve("node-id")).trim());
        assertEquals(generated, NodeIdentity.resolve(dir, null));
        assertEquals(generated, NodeIdentity.resolve(dir, generated));
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> NodeIdentity.resolve(dir, "other"));
        assertTrue(e.getMessage().contains("belongs to node '" + generated + "'"), e.getMessage());
        assertEquals("given", NodeIdentity.resolve(dir.resolve("fresh"), "given"));
    }

    @Test
    void chainFlagsHaveDefaultsAndPreciseErrors() {
        StorageServerConfig d = StorageServerConfig.fromArgs();
        assertEquals(io.fastblock.storage.chain.ChainLimits.DEFAULTS, d.chain());
        assertEquals(StorageServerConfig.DEFAULT_TAIL_LAYOUT, d.tailLayout());
        StorageServerConfig c = StorageServerConfig.fromArgs("--sent-max-writes=8", "--sent-max-bytes=2M", "--ack-timeout-ms=500",
                "--link-retry-ms=10", "--copy-piece=64K", "--tail-layout=log");
        assertEquals(new io.fastblock.storage.chain.ChainLimits(8, 2L << 20, 500, 10, 64 << 10), c.chain());
        assertEquals(io.fastblock.storage.chain.TailLayout.LOG, c.tailLayout());
        assertEquals(io.fastblock.storage.chain.TailLayout.LOG_AND_IN_PLACE, StorageServerConfig.fromArgs("--tail-layout=log+in-place").tailLayout());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> StorageServerConfig.fromArgs("--tail-layout=disk"))
                .getMessage().contains("--tail-layout must be log or log+in-place"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> StorageServerConfig.fromArgs("--sent-max-writes=0"))
                .getMessage().contains("--sent-max-writes"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> StorageServerConfig.fromArgs("--copy-piece=1K"))
                .getMessage().contains("--copy-piece at least 4K"));
    }

    @Test
    void helpDescribesEveryFlagTheParseReadsAndNoOther() {
        assertEquals("", io.fastblock.protocol.config.CommandLine.helpMismatch(StorageServerConfig::from, StorageServerConfig.FLAGS));
    }
}
