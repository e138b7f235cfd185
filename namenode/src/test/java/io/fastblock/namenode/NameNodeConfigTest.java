package io.fastblock.namenode;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class NameNodeConfigTest {
    @Test
    void defaults() {
        NameNodeConfig c = NameNodeConfig.defaults();
        assertEquals(Path.of("./var/namenode"), c.dataDir());
        assertEquals("127.0.0.1", c.listenHost());
        assertEquals(9333, c.httpPort());
        assertTrue(c.embeddedZooKeeper());
        assertEquals(2181, c.zkPort());
        assertEquals(64L << 20, c.chunkSize());
        assertEquals(3, c.replication());
        assertEquals(java.time.Duration.ofSeconds(60), c.replaceAfter());
    }

    @Test
    void downOutInterval() {
        assertEquals(java.time.Duration.ofMillis(40_000), NameNodeConfig.fromArgs("--replace-after-ms=40000").replaceAfter());
        assertEquals(java.time.Duration.ZERO, NameNodeConfig.fromArgs("--replace-after-ms=0").replaceAfter());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> NameNodeConfig.fromArgs("--replace-after-ms=-1"))
                .getMessage().contains("--replace-after-ms must be >= 0"));
        assertThrows(IllegalArgumentException.class, () -> NameNodeConfig.fromArgs("--replace-after-ms=soon"));
        assertThrows(IllegalArgumentException.class, () -> NameNodeConfig.fromArgs("--rejoin-window-s=300"));
    }

    @Test
    void readsEveryFlag() {
        NameNodeConfig c = NameNodeConfig.fromArgs("--data-dir=/tmp/x", "--listen=0.0.0.0", "--http-port=8080",
                "--zk=zk1:2181,zk2:2181", "--zk-port=2182", "--chunk-size=16M", "--replication=3");
        assertEquals(Path.of("/tmp/x"), c.dataDir());
        assertEquals("0.0.0.0", c.listenHost());
        assertEquals(8080, c.httpPort());
        assertFalse(c.embeddedZooKeeper());
        assertEquals("zk1:2181,zk2:2181", c.zkConnect());
        assertEquals(2182, c.zkPort());
        assertEquals(16L << 20, c.chunkSize());
    }

    @Test
    void chunkSizeInBytes() {
        assertEquals(1L << 20, NameNodeConfig.fromArgs("--chunk-size=1048576").chunkSize());
    }

    @Test
    void rejectsBadValues() {
        assertThrows(IllegalArgumentException.class, () -> NameNodeConfig.fromArgs("--chunk-size=3M"));
        assertThrows(IllegalArgumentException.class, () -> NameNodeConfig.fromArgs("--chunk-size=2G"));
        assertThrows(IllegalArgumentException.class, () -> NameNodeConfig.fromArgs("--chunk-size=abc"));
        assertThrows(IllegalArgumentException.class, () -> NameNodeConfig.fromArgs("--replication=2"));
        assertThrows(IllegalArgumentException.class, () -> NameNodeConfig.fromArgs("--http-port=70000"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> NameNodeConfig.fromArgs("--htp-port=1"))
                .getMessage().contains("htp-port"));
    }

    @Test
    void helpDescribesEveryFlagTheParseReadsAndNoOther() {
        assertEquals("", io.fastblock.protocol.config.CommandLine.helpMismatch(NameNodeConfig::from, NameNodeConfig.FLAGS));
    }
}
