package io.fastblock.storage.chain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.WriteRequest;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.NodeRecord;
import io.fastblock.protocol.meta.ZkPaths;
import io.fastblock.storage.StorageServer;
import io.fastblock.storage.StorageServerConfig;
import io.fastblock.storage.net.NettyTransport;
import io.fastblock.storage.net.StorageClient;
import io.fastblock.storage.net.StorageRequestHandler;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoopGroup;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.util.ArrayList;
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

/**
 * Memory bound under a stalled successor, over real sockets: the successor accepts the
 * connection and reads every byte but never answers. The head's sent list fills to its bound,
 * admission stops, the connection handler stops reading the client's socket, and the head forwards
 * nothing beyond the bound however much the client sends.
 */
class StalledSuccessorTest {
    private static final int WRITE = 16 * 1024;
    private static final int SENT_MAX = 32;

    @TempDir
    Path dir;

    @Test
    void aStalledSuccessorStopsTheHeadFromReadingMore() throws Exception {
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
            ChainLimits limits = new ChainLimits(SENT_MAX, 64L << 20, 60_000, 100, 1 << 20);
            EventLoopGroup loop = NettyTransport.group(1, "stall-client");
            try (StorageServer head = StorageServer.start(new StorageServerConfig("head", dir.resolve("head"), "127.0.0.1", 0,
                    zkServer.getConnectString(), 1 << 20, limits));
                 StorageClient client = StorageClient.connect(loop, "127.0.0.1", head.port()).awaitConnected(10, TimeUnit.SECONDS)) {
                int sent = 3000; // 48 MiB offered
                List<CompletableFuture<StorageResponse>> answers = new ArrayList<>();
                for (int i = 0; i < sent; i++) {
                    long offset = (long) (i % 4096) * WRITE;
                    answers.add(client.send(id -> new WriteRequest(id, 0, new ChainAddress(1, 1, 1), new ChunkId(1, 0), offset, 0,
                            Unpooled.wrappedBuffer(new byte[WRITE]))));
                }
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (head.replicas().sentSize(1) < SENT_MAX && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                Thread.sleep(1000); // let anything that would still move, move
                long forwardedBytes = received.get();
                double taken = head.chainMetrics().writesReceived.count();
                assertEquals(SENT_MAX, head.replicas().sentSize(1), "the sent list is full and holds no more than its bound");
                assertTrue(forwardedBytes >= (long) SENT_MAX * WRITE, "the successor got the first " + SENT_MAX + " writes");
                assertTrue(forwardedBytes < (long) (SENT_MAX + 1) * (WRITE + 128),
                        "nothing beyond the bound was forwarded: " + forwardedBytes + " bytes");
                // Reading stops at MAX_OUTSTANDING; frames already decoded from the last socket read still arrive.
                assertTrue(taken <= StorageRequestHandler.MAX_OUTSTANDING + 16,
                        "the head stopped reading its client's socket: it took " + taken + " of " + sent + " writes");
                assertTrue(head.chainMetrics().sentListFull.count() >= 1);
                assertEquals(SENT_MAX * (double) WRITE, head.chainMetrics().registry().get("fastblock.chain.sent.bytes").gauge().value());
                answers.forEach(f -> assertFalse(f.isDone(), "no write is acknowledged without its successor"));
                Thread.sleep(500);
                assertEquals(forwardedBytes, received.get(), "still nothing more forwarded");
                assertEquals(taken, head.chainMetrics().writesReceived.count(), "still nothing more read from the client");

                // The namenode removes the stalled node: the head becomes tail, its sent list counts as
                // acknowledged once its copy is durable, and the writes of the old version are refused.
                zk.setData().forPath(ZkPaths.group(1), MetaJson.write(new GroupRecord(1, 2, List.of("head"))));
                int ok = 0;
                for (CompletableFuture<StorageResponse> f : answers) {
                    StorageResponse r = f.get(30, TimeUnit.SECONDS);
                    r.data().release();
                    ok += r.isOk() ? 1 : 0;
                }
                assertTrue(ok >= SENT_MAX, ok + " writes acknowledged after the reconfiguration");
                assertEquals(0, head.replicas().sentSize(1));
            } finally {
                loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
            }
        }
    }
}
