package io.fastblock.storage.chain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.fastblock.protocol.meta.ZkPaths;
import java.nio.charset.StandardCharsets;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Floors and seals from a real ZooKeeper: fences/{id} and the compact sealed-ids set of reclaimed layers. */
class FenceDirectoryTest {
    private TestingServer server;
    private CuratorFramework zk;

    @BeforeEach
    void start() throws Exception {
        server = new TestingServer(true);
        zk = CuratorFrameworkFactory.newClient(server.getConnectString(), new RetryOneTime(100));
        zk.start();
        zk.blockUntilConnected();
    }

    @AfterEach
    void stop() throws Exception {
        zk.close();
        server.close();
    }

    private static byte[] text(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    @Test
    void sealedIdsRefuseWritesAtStartAndWhenTheSetGrows() throws Exception {
        zk.create().creatingParentsIfNeeded().forPath(ZkPaths.fence(5), text("3"));
        zk.create().creatingParentsIfNeeded().forPath(ZkPaths.SEALED_IDS, text("7-9"));
        EpochFence fence = new EpochFence();
        try (FenceDirectory dir = new FenceDirectory(zk, fence)) {
            dir.start();
            assertThrows(RequestRejected.class, () -> fence.admitWrite(5, 2, "n"));
            fence.admitWrite(5, 3, "n").release();
            for (long id = 7; id <= 9; id++) {
                long v = id;
                assertThrows(RequestRejected.class, () -> fence.admitWrite(v, 1, "n"), "id " + v);
            }
            fence.admitWrite(10, 1, "n").release(); // id 10 is still in use
            zk.setData().forPath(ZkPaths.SEALED_IDS, text("7-10"));
            long deadline = System.nanoTime() + 20_000_000_000L;
            while (fence.floor(10) != EpochFence.SEALED && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertEquals(EpochFence.SEALED, fence.floor(10));
            assertThrows(RequestRejected.class, () -> fence.admitWrite(10, 2, "n"));
        }
        // A restarted server (a fresh fence) knows every seal, though the fences/ znodes of 7-10 never existed.
        EpochFence restarted = new EpochFence();
        try (FenceDirectory dir = new FenceDirectory(zk, restarted)) {
            dir.start();
            assertThrows(RequestRejected.class, () -> restarted.admitWrite(10, 99, "n"));
            assertThrows(RequestRejected.class, () -> restarted.admitWrite(8, 99, "n", true));
            restarted.admitWrite(11, 1, "n").release();
        }
    }
}
