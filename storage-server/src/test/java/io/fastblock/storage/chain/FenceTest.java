package io.fastblock.storage.chain;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.FenceRequest;
import io.fastblock.protocol.Status;
import io.fastblock.protocol.client.BlockingStorageClient;
import io.fastblock.protocol.client.StorageStatusException;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.NodeRecord;
import io.fastblock.protocol.meta.VolumeFences;
import io.fastblock.protocol.meta.ZkPaths;
import io.fastblock.storage.StorageServer;
import io.fastblock.storage.StorageServerConfig;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** FENCE against real storage servers, a real ZooKeeper and real sockets. */
class FenceTest {
    private static final ChunkId CHUNK = new ChunkId(42, 0);

    @TempDir
    Path dir;

    private static ChainAddress chain(long version, long epoch) {
        return new ChainAddress(1, version, epoch);
    }

    private static StorageServerConfig config(Path dir, String id, String zk) {
        return new StorageServerConfig(id, dir.resolve(id), "127.0.0.1", 0, zk, 1 << 20,
                new ChainLimits(64, 64L << 20, 60_000, 100, 1 << 20));
    }

    /**
     * A write held in flight by a successor that reads but never answers: the fence's answer
     * comes only after that write completed (here: once the namenode drops the stalled node and
     * the head, now tail, acknowledges it).
     */
    @Test
    void theFenceAnswersOnlyAfterTheWritesAdmittedBeforeIt() throws Exception {
        try (TestingServer zkServer = new TestingServer(true);
             CuratorFramework zk = CuratorFrameworkFactory.newClient(zkServer.getConnectString(), new RetryOneTime(100));
             ServerSocket sink = new ServerSocket(0, 10, InetAddress.getLoopbackAddress())) {
            zk.start();
            AtomicLong received = new AtomicLong();
            Thread reader = new Thread(() -> {
                try (Socket s = sink.accept(); InputStream in = s.getInputStream()) {
                    byte[] buf = new byte[65536];
                    int n;
                    while ((n = in.read(buf)) >= 0) {
                        received.addAndGet(n);
                    }
                } catch (Exception ignored) {
                    // closed at the end of the test
                }
            }, "stalled-successor");
            reader.setDaemon(true);
            reader.start();
            zk.create().creatingParentsIfNeeded().forPath(ZkPaths.node("stalled"),
                    MetaJson.write(new NodeRecord("stalled", "127.0.0.1", sink.getLocalPort(), 0, 0)));
            zk.create().creatingParentsIfNeeded().forPath(ZkPaths.group(1),
                    MetaJson.write(new GroupRecord(1, 1, List.of("head", "stalled"))));
            try (StorageServer head = StorageServer.start(config(dir, "head", zkServer.getConnectString()));
                 BlockingStorageClient writer = new BlockingStorageClient("127.0.0.1", head.port(), Duration.ofSeconds(60));
                 BlockingStorageClient admin = new BlockingStorageClient("127.0.0.1", head.port(), Duration.ofSeconds(60))) {
                CompletableFuture<Void> write = CompletableFuture.runAsync(() -> {
                    try {
                        writer.write(chain(1, 3), CHUNK, 0, new byte[4096]);
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                });
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (head.replicas().fences().inFlight(CHUNK.volumeId()) == 0 && System.nanoTime() < deadline) {
                    Thread.sleep(10);
                }
                assertEquals(1, head.replicas().fences().inFlight(CHUNK.volumeId()), "the write is admitted and in flight");
                CompletableFuture<Void> fence = CompletableFuture.runAsync(() -> {
                    try {
                        admin.fence(CHUNK.volumeId(), 4);
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                });
                Thread.sleep(1000);
                assertFalse(write.isDone(), "the successor never answers");
                assertFalse(fence.isDone(), "no fence answer while a write admitted before it is in flight");
                assertEquals(4, head.replicas().fences().floor(CHUNK.volumeId()), "the floor is raised at once");

                // The namenode drops the stalled node: the head is tail now and acknowledges the write.
                zk.setData().forPath(ZkPaths.group(1), MetaJson.write(new GroupRecord(1, 2, List.of("head"))));
                write.get(30, TimeUnit.SECONDS);
                fence.get(30, TimeUnit.SECONDS);
                assertEquals(0, head.replicas().fences().inFlight(CHUNK.volumeId()));
                assertEquals(1.0, head.metrics().fences.count());

                StorageStatusException stale = assertThrows(StorageStatusException.class,
                        () -> writer.write(chain(2, 3), CHUNK, 0, new byte[4096]));
                assertEquals(Status.STALE_EPOCH, stale.status());
                writer.write(chain(2, 4), CHUNK, 0, new byte[] {1});
            }
        }
    }

    @Test
    void floorsRejectOlderEpochsSealsRejectAllAndBothSurviveARestart() throws Exception {
        try (TestingServer zkServer = new TestingServer(true);
             CuratorFramework zk = CuratorFrameworkFactory.newClient(zkServer.getConnectString(), new RetryOneTime(100))) {
            zk.start();
            zk.create().creatingParentsIfNeeded().forPath(ZkPaths.group(1),
                    MetaJson.write(new GroupRecord(1, 1, List.of("solo"))));
            ChunkId sealedChunk = new ChunkId(43, 0);
            byte[] data = new byte[8192];
            java.util.Arrays.fill(data, (byte) 5);
            StorageServer server = StorageServer.start(config(dir, "solo", zkServer.getConnectString()));
            try (BlockingStorageClient c = new BlockingStorageClient("127.0.0.1", server.port(), Duration.ofSeconds(30))) {
                c.write(chain(1, 1), CHUNK, 0, data);
                c.write(chain(1, 1), sealedChunk, 0, data);
                // The namenode's order: the znode first, then FENCE to every live server.
                VolumeFences.raise(zk, CHUNK.volumeId(), 7);
                c.fence(CHUNK.volumeId(), 7);
                VolumeFences.raise(zk, sealedChunk.volumeId(), VolumeFences.SEALED);
                c.fence(sealedChunk.volumeId(), FenceRequest.SEALED);
                c.fence(CHUNK.volumeId(), 3); // never lowers
                assertRefused(c, CHUNK, 6, "older than 7");
                c.write(chain(1, 7), CHUNK, 0, data);
                assertRefused(c, sealedChunk, Long.MAX_VALUE - 1, "sealed");
                StorageStatusException trim = assertThrows(StorageStatusException.class,
                        () -> c.trim(chain(1, 100), sealedChunk, 0, 4096));
                assertEquals(Status.STALE_EPOCH, trim.status());
                assertArrayEquals(data, c.read(chain(1, 1), sealedChunk, 0, data.length), "a sealed volume stays readable");
            } finally {
                server.close();
            }

            server = StorageServer.start(config(dir, "solo", zkServer.getConnectString()));
            try (BlockingStorageClient c = new BlockingStorageClient("127.0.0.1", server.port(), Duration.ofSeconds(30))) {
                assertRefused(c, CHUNK, 6, "older than 7");
                assertRefused(c, sealedChunk, 8, "sealed");
                // Only a trim carrying the seal itself passes: the namenode giving the space back.
                StorageStatusException write = assertThrows(StorageStatusException.class,
                        () -> c.write(chain(1, Long.MAX_VALUE), sealedChunk, 0, data));
                assertEquals(Status.STALE_EPOCH, write.status());
                c.trim(chain(1, Long.MAX_VALUE), sealedChunk, 0, 4096);
                byte[] after = c.read(chain(1, 1), sealedChunk, 0, data.length);
                assertArrayEquals(new byte[4096], java.util.Arrays.copyOfRange(after, 0, 4096), "trimmed block reads zeros");
                assertArrayEquals(java.util.Arrays.copyOfRange(data, 4096, 8192),
                        java.util.Arrays.copyOfRange(after, 4096, 8192));
                c.write(chain(1, 7), CHUNK, 4096, data);
                // A floor recorded while the server runs reaches it through its watch.
                VolumeFences.raise(zk, CHUNK.volumeId(), 9);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (server.replicas().fences().floor(CHUNK.volumeId()) < 9 && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                assertRefused(c, CHUNK, 8, "older than 9");
            } finally {
                server.close();
            }
        }
    }

    /**
     * A middle fenced before its head: a write the head (not yet fenced) admits is still applied on
     * every replica, never refused half way down the chain, so the replicas stay identical.
     */
    @Test
    void aFencedMiddleStillAppliesWhatItsHeadAdmitted() throws Exception {
        try (TestingServer zkServer = new TestingServer(true);
             CuratorFramework zk = CuratorFrameworkFactory.newClient(zkServer.getConnectString(), new RetryOneTime(100))) {
            zk.start();
            zk.create().creatingParentsIfNeeded().forPath(ZkPaths.group(1),
                    MetaJson.write(new GroupRecord(1, 1, List.of("h", "m", "t"))));
            List<StorageServer> servers = new java.util.ArrayList<>();
            List<BlockingStorageClient> clients = new java.util.ArrayList<>();
            try {
                for (String id : List.of("h", "m", "t")) {
                    StorageServer s = StorageServer.start(config(dir, id, zkServer.getConnectString()));
                    servers.add(s);
                    clients.add(new BlockingStorageClient("127.0.0.1", s.port(), Duration.ofSeconds(30)));
                }
                clients.get(1).fence(CHUNK.volumeId(), 5);
                byte[] data = new byte[4096];
                java.util.Arrays.fill(data, (byte) 3);
                clients.get(0).write(chain(1, 3), CHUNK, 0, data);
                clients.get(0).trim(chain(1, 3), CHUNK, 0, 4096);
                clients.get(0).write(chain(1, 3), CHUNK, 4096, data);
                for (BlockingStorageClient c : clients) {
                    assertArrayEquals(new byte[4096], c.read(chain(1, 5), CHUNK, 0, 4096));
                    assertArrayEquals(data, c.read(chain(1, 5), CHUNK, 4096, 4096));
                }
                clients.get(0).fence(CHUNK.volumeId(), 5);
                assertRefused(clients.get(0), CHUNK, 4, "older than 5");
            } finally {
                clients.forEach(BlockingStorageClient::close);
                servers.forEach(StorageServer::close);
            }
        }
    }

    private static void assertRefused(BlockingStorageClient c, ChunkId chunk, long epoch, String why) {
        StorageStatusException e = assertThrows(StorageStatusException.class,
                () -> c.write(chain(1, epoch), chunk, 0, new byte[4096]));
        assertEquals(Status.STALE_EPOCH, e.status());
        assertTrue(e.getMessage().contains(why), e.getMessage());
    }
}
