package io.fastblock.storage.chain;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.PingRequest;
import io.fastblock.protocol.ReadRequest;
import io.fastblock.protocol.Status;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.WriteRequest;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.ZkPaths;
import io.fastblock.storage.StorageServer;
import io.fastblock.storage.StorageServerConfig;
import io.fastblock.storage.net.NettyTransport;
import io.fastblock.storage.net.StorageClient;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoopGroup;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Three real storage servers, a real ZooKeeper, real sockets. */
class ChainReplicationTest {
    private static final int GROUP = 1;
    private static final ChainAddress CHAIN = new ChainAddress(GROUP, 1, 1);

    @TempDir
    static Path dir;
    static TestingServer zkServer;
    static CuratorFramework zk;
    static final List<StorageServer> servers = new ArrayList<>();
    static EventLoopGroup clientLoop;
    static final List<StorageClient> clients = new ArrayList<>();

    @BeforeAll
    static void startCluster() throws Exception {
        zkServer = new TestingServer(true);
        zk = CuratorFrameworkFactory.newClient(zkServer.getConnectString(), new RetryOneTime(100));
        zk.start();
        zk.create().creatingParentsIfNeeded().forPath(ZkPaths.group(GROUP),
                MetaJson.write(new GroupRecord(GROUP, 1, List.of("a", "b", "c"))));
        zk.create().creatingParentsIfNeeded().forPath(ZkPaths.group(2),
                MetaJson.write(new GroupRecord(2, 1, List.of("a", "b", "ghost"))));
        for (String id : List.of("a", "b", "c")) {
            servers.add(StorageServer.start(new StorageServerConfig(id, dir.resolve(id), "127.0.0.1", 0,
                    zkServer.getConnectString(), 1 << 20, new ChainLimits(1024, 64L << 20, 3_000, 100, 1 << 20))));
        }
        clientLoop = NettyTransport.group(1, "test-client");
        for (StorageServer s : servers) {
            clients.add(StorageClient.connect(clientLoop, "127.0.0.1", s.port()).awaitConnected(10, TimeUnit.SECONDS));
        }
    }

    @AfterAll
    static void stopCluster() throws Exception {
        clients.forEach(StorageClient::close);
        if (clientLoop != null) {
            clientLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
        servers.forEach(StorageServer::close);
        if (zk != null) {
            zk.close();
        }
        if (zkServer != null) {
            zkServer.close();
        }
    }

    private static StorageResponse write(StorageClient c, ChainAddress chain, ChunkId chunk, long offset, byte[] data) throws Exception {
        return c.send(id -> new WriteRequest(id, 0, chain, chunk, offset, 0, Unpooled.wrappedBuffer(data)))
                .get(20, TimeUnit.SECONDS);
    }

    private static byte[] read(StorageClient c, ChunkId chunk, long offset, int length) throws Exception {
        StorageResponse r = c.send(id -> new ReadRequest(id, CHAIN, chunk, offset, length)).get(20, TimeUnit.SECONDS);
        try {
            assertEquals(Status.OK, r.status(), r.message());
            byte[] out = new byte[r.data().readableBytes()];
            r.data().getBytes(r.data().readerIndex(), out);
            return out;
        } finally {
            r.data().release();
        }
    }

    @Test
    void pingAnswersOk() throws Exception {
        StorageResponse r = clients.get(1).send(PingRequest::new).get(10, TimeUnit.SECONDS);
        assertEquals(Status.OK, r.status());
    }

    @Test
    void writesThroughTheHeadReadBackEquallyFromEveryReplica() throws Exception {
        ChunkId chunk = new ChunkId(5, 0);
        int size = 256 * 1024;
        byte[] ref = new byte[size];
        Random r = new Random(7);
        for (int round = 0; round < 10; round++) {
            List<CompletableFuture<StorageResponse>> inFlight = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                int len = 1 + r.nextInt(16 * 1024);
                int off = r.nextInt(size - len);
                byte[] d = new byte[len];
                r.nextBytes(d);
                System.arraycopy(d, 0, ref, off, len);
                inFlight.add(clients.get(0).send(id -> new WriteRequest(id, 0, CHAIN, chunk, off, 0, Unpooled.wrappedBuffer(d))));
            }
            for (CompletableFuture<StorageResponse> f : inFlight) {
                StorageResponse resp = f.get(20, TimeUnit.SECONDS);
                assertEquals(Status.OK, resp.status(), resp.message());
            }
        }
        for (StorageClient c : clients) {
            assertArrayEquals(ref, read(c, chunk, 0, size), "replica at " + c.peer());
        }
        assertTrue(servers.get(2).metrics().logAppends.count() >= 160);
        System.out.printf("tail: %.0f appends, %.0f fsyncs, %.2f writes per fsync%n", servers.get(2).metrics().logAppends.count(),
                servers.get(2).metrics().logFsyncs.count(), servers.get(2).metrics().writesPerFsync());
    }

    @Test
    void staleChainVersionIsRejectedAndNothingIsWritten() throws Exception {
        ChunkId chunk = new ChunkId(6, 0);
        StorageResponse r = write(clients.get(0), new ChainAddress(GROUP, 0, 1), chunk, 0, new byte[]{1, 2, 3});
        assertEquals(Status.STALE_CHAIN, r.status());
        assertTrue(r.message().contains("chain version 1"), r.message());
        for (StorageClient c : clients) {
            assertArrayEquals(new byte[3], read(c, chunk, 0, 3));
        }
    }

    @Test
    void writeEnteringAtTheMiddleIsRefused() throws Exception {
        StorageResponse r = write(clients.get(1), CHAIN, new ChunkId(6, 1), 0, new byte[]{1});
        assertEquals(Status.BAD_REQUEST, r.status());
        assertTrue(r.message().contains("writes enter the chain at a"), r.message());
    }

    @Test
    void downstreamFailureReachesTheClientNamingTheFailedNodeAfterTheAckTimeout() throws Exception {
        // The write waits for a chain change that never comes (ghost is never removed), then fails.
        StorageResponse r = write(clients.get(0), new ChainAddress(2, 1, 1), new ChunkId(6, 2), 0, new byte[]{1});
        assertEquals(Status.IO_ERROR, r.status());
        assertTrue(r.message().contains("node b") && r.message().contains("ghost"), r.message());
    }

    @Test
    void outOfRangeRequestsGetBadRequest() throws Exception {
        ChunkId chunk = new ChunkId(6, 3);
        StorageResponse r = clients.get(2).send(id -> new ReadRequest(id, CHAIN, chunk, ReplicaService.MAX_CHUNK_BYTES - 10, 100))
                .get(10, TimeUnit.SECONDS);
        assertEquals(Status.BAD_REQUEST, r.status());
        assertTrue(r.message().contains("beyond"), r.message());
        StorageResponse w = write(clients.get(0), CHAIN, chunk, ReplicaService.MAX_CHUNK_BYTES, new byte[]{1});
        assertEquals(Status.BAD_REQUEST, w.status());
        StorageResponse empty = write(clients.get(0), CHAIN, chunk, 0, new byte[0]);
        assertEquals(Status.BAD_REQUEST, empty.status());
        assertTrue(empty.message().contains("empty write"), empty.message());
    }

    @Test
    void negativeOffsetOnTheWireClosesOnlyThatConnection() throws Exception {
        StorageClient bad = StorageClient.connect(clientLoop, "127.0.0.1", servers.get(0).port()).awaitConnected(10, TimeUnit.SECONDS);
        try {
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> bad.send(id -> new ReadRequest(id, CHAIN, new ChunkId(6, 4), -5, 10)).get(10, TimeUnit.SECONDS));
            assertTrue(e.getCause().getMessage().contains("closed"), e.getCause().toString());
        } finally {
            bad.close();
        }
        assertEquals(Status.OK, clients.get(0).send(PingRequest::new).get(10, TimeUnit.SECONDS).status());
    }
}
