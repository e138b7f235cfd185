package io.fastblock.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.meta.ZkPaths;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StorageServerGroupTest {
    @TempDir
    Path dir;

    @Test
    void eachServerTakesTheFlagsUpToTheNextSeparator() {
        List<StorageServerConfig> c = StorageServerGroup.parse("--node-id=a", "--data-dir=" + dir.resolve("a"), "--port=9501",
                "--next", "--node-id=b", "--data-dir=" + dir.resolve("b"), "--port=9502", "--segment-size=8M");
        assertEquals(2, c.size());
        assertEquals("a", c.get(0).nodeId());
        assertEquals(9501, c.get(0).port());
        assertEquals(StorageServerConfig.DEFAULT_SEGMENT_SIZE, c.get(0).segmentSize());
        assertEquals("b", c.get(1).nodeId());
        assertEquals(dir.resolve("b"), c.get(1).dataDir());
        assertEquals(8L << 20, c.get(1).segmentSize());
    }

    @Test
    void badArgumentsNameTheServer() {
        assertMessage("server 2: ", "--data-dir=" + dir.resolve("a"), "--next", "--data-dir=" + dir.resolve("b"),
                "--segment-size=lots");
        assertMessage("server 2 has no flags", "--data-dir=" + dir.resolve("a"), "--next", "--next",
                "--data-dir=" + dir.resolve("b"));
        // Two servers on one data directory would write each other's log and chunk files.
        assertMessage("servers 1 and 2 have the same data directory", "--data-dir=" + dir.resolve("a"), "--port=1",
                "--next", "--data-dir=" + dir.resolve("x/../a"), "--port=2");
        assertMessage("servers 1 and 3 have the same port 9501", "--data-dir=" + dir.resolve("a"), "--port=9501",
                "--next", "--data-dir=" + dir.resolve("b"), "--port=9502", "--next", "--data-dir=" + dir.resolve("c"),
                "--port=9501");
        assertMessage("servers 1 and 2 have the same node id n", "--node-id=n", "--data-dir=" + dir.resolve("a"),
                "--port=0", "--next", "--node-id=n", "--data-dir=" + dir.resolve("b"), "--port=0");
    }

    @Test
    void portZeroMayRepeat() {
        assertEquals(2, StorageServerGroup.parse("--data-dir=" + dir.resolve("a"), "--port=0", "--next",
                "--data-dir=" + dir.resolve("b"), "--port=0").size());
    }

    @Test
    void serversInOneJvmAreSeparateNodes() throws Exception {
        try (TestingServer zkServer = new TestingServer(true);
             CuratorFramework zk = CuratorFrameworkFactory.newClient(zkServer.getConnectString(), new RetryOneTime(100))) {
            zk.start();
            List<StorageServerConfig> configs = StorageServerGroup.parse(
                    "--node-id=s1", "--data-dir=" + dir.resolve("s1"), "--port=0", "--zk=" + zkServer.getConnectString(),
                    "--next", "--node-id=s2", "--data-dir=" + dir.resolve("s2"), "--port=0", "--zk=" + zkServer.getConnectString(),
                    "--next", "--node-id=s3", "--data-dir=" + dir.resolve("s3"), "--port=0", "--zk=" + zkServer.getConnectString());
            StorageServer first;
            try (StorageServerGroup group = StorageServerGroup.start(configs)) {
                assertEquals(List.of("s1", "s2", "s3"), group.servers().stream().map(StorageServer::nodeId).toList());
                assertEquals(3, group.servers().stream().mapToInt(StorageServer::port).distinct().count());
                for (StorageServer s : group.servers()) {
                    // Each has its own ZooKeeper session and its own listening socket.
                    assertNotNull(zk.checkExists().forPath(ZkPaths.live(s.nodeId())), s.nodeId());
                    try (Socket c = new Socket(InetAddress.getLoopbackAddress(), s.port())) {
                        assertTrue(c.isConnected());
                    }
                }
                first = group.servers().get(0);
            }
            assertClosed(first.port());
            for (String id : List.of("s1", "s2", "s3")) {
                assertEquals(null, zk.checkExists().forPath(ZkPaths.live(id)), id + " still live after close");
            }
        }
    }

    @Test
    void aServerThatCannotStartStopsTheOnesBeforeIt() throws Exception {
        try (TestingServer zkServer = new TestingServer(true);
             ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            String zk = "--zk=" + zkServer.getConnectString();
            List<StorageServerConfig> configs = StorageServerGroup.parse(
                    "--node-id=s1", "--data-dir=" + dir.resolve("s1"), "--port=0", zk,
                    "--next", "--node-id=s2", "--data-dir=" + dir.resolve("s2"), "--port=" + taken.getLocalPort(), zk);
            IOException e = assertThrows(IOException.class, () -> StorageServerGroup.start(configs));
            assertTrue(e.getMessage().startsWith("server 2 (data directory " + dir.resolve("s2") + ", port "
                    + taken.getLocalPort() + ") could not start"), e.getMessage());
            try (CuratorFramework c = CuratorFrameworkFactory.newClient(zkServer.getConnectString(), new RetryOneTime(100))) {
                c.start();
                assertEquals(null, c.checkExists().forPath(ZkPaths.live("s1")), "server 1 was left running");
            }
        }
    }

    /**
     * Ctrl-C reaches every process of a local cluster at once, so the namenode (and the ZooKeeper it
     * runs) may be gone before a storage server closes. Closing its live and load nodes then waited
     * out Curator's retries (a 10 s connection timeout per try) and the launcher killed the JVM
     * before its data path was closed.
     */
    @Test
    void serversCloseWhenZooKeeperIsAlreadyGone() throws Exception {
        StorageServerGroup group;
        int[] ports;
        try (TestingServer zkServer = new TestingServer(true)) {
            String zk = "--zk=" + zkServer.getConnectString();
            group = StorageServerGroup.start(StorageServerGroup.parse(
                    "--node-id=s1", "--data-dir=" + dir.resolve("s1"), "--port=0", zk,
                    "--next", "--node-id=s2", "--data-dir=" + dir.resolve("s2"), "--port=0", zk));
            ports = group.servers().stream().mapToInt(StorageServer::port).toArray();
        }
        Thread closing = new Thread(group::close, "close-without-zookeeper");
        closing.start();
        closing.join(10_000);
        assertFalse(closing.isAlive(), "closing two servers without ZooKeeper took more than 10 s");
        for (int port : ports) {
            assertClosed(port);
        }
    }

    private static void assertClosed(int port) {
        assertFalse(canConnect(port), "port " + port + " still accepts connections after close");
    }

    private static boolean canConnect(int port) {
        try (Socket c = new Socket(InetAddress.getLoopbackAddress(), port)) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static void assertMessage(String expected, String... args) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> StorageServerGroup.parse(args));
        assertTrue(e.getMessage().startsWith(expected), e.getMessage());
    }
}
