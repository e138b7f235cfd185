package io.fastblock.protocol.meta;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;

class VolumeFencesTest {
    @Test
    void raiseNeverLowersAndSealIsTheMaximum() throws Exception {
        try (TestingServer zkServer = new TestingServer(true);
             CuratorFramework zk = CuratorFrameworkFactory.newClient(zkServer.getConnectString(), new RetryOneTime(100))) {
            zk.start();
            assertEquals(0, VolumeFences.read(zk, 5));
            assertEquals(3, VolumeFences.raise(zk, 5, 3));
            assertEquals(3, VolumeFences.raise(zk, 5, 2));
            assertEquals(3, VolumeFences.read(zk, 5));
            assertArrayEquals("3".getBytes(StandardCharsets.US_ASCII), zk.getData().forPath("/fastblock/fences/5"));
            assertEquals(VolumeFences.SEALED, VolumeFences.raise(zk, 5, VolumeFences.SEALED));
            assertEquals(VolumeFences.SEALED, VolumeFences.raise(zk, 5, 10));
            assertEquals(0, VolumeFences.read(zk, 6));
        }
    }

    @Test
    void parseRejectsGarbageWithTheText() {
        assertEquals(42, VolumeFences.parse("42\n".getBytes(StandardCharsets.US_ASCII)));
        assertEquals(Long.MAX_VALUE, VolumeFences.parse(Long.toString(Long.MAX_VALUE).getBytes(StandardCharsets.US_ASCII)));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> VolumeFences.parse("x1".getBytes(StandardCharsets.US_ASCII)));
        assertEquals("fence znode holds \"x1\", not a decimal epoch", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> VolumeFences.parse("-1".getBytes(StandardCharsets.US_ASCII)));
    }
}
