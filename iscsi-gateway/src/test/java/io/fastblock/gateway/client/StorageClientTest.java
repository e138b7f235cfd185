package io.fastblock.gateway.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.ReadRequest;
import io.fastblock.protocol.Status;
import io.fastblock.protocol.StorageMessage;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.WriteRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class StorageClientTest {
    private static final ChainAddress CHAIN = new ChainAddress(1, 1, 0);

    private record Received(Channel channel, StorageMessage message) {
    }

    private final List<Received> received = new CopyOnWriteArrayList<>();
    private TestStorageServer server;
    private StorageClient client;

    @AfterEach
    void tearDown() {
        if (client != null) {
            client.close();
        }
        if (server != null) {
            server.close();
        }
        for (Received r : received) {
            if (r.message() instanceof WriteRequest w && w.data().refCnt() > 0) {
                w.data().release();
            }
        }
    }

    private void waitForRequests(int n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (received.size() < n && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals(n, received.size());
    }

    private static StorageRequestException storageFailure(CompletableFuture<?> f) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(5, TimeUnit.SECONDS));
        return assertInstanceOf(StorageRequestException.class, e.getCause());
    }

    @Test
    void answersAreMatchedToRequestsWhenTheyComeOutOfOrder() throws Exception {
        server = new TestStorageServer((ch, msg) -> received.add(new Received(ch, msg)));
        client = new StorageClient(Duration.ofSeconds(5), 1);
        NodeAddress node = server.address();
        List<CompletableFuture<StorageResponse>> futures = new java.util.ArrayList<>();
        for (int i = 0; i < 5; i++) {
            futures.add(client.read(node, CHAIN, new ChunkId(9, i), 4096L * i, 16));
        }
        waitForRequests(5);
        assertEquals(1, server.clients.size(), "one connection per node");
        // Answer in reverse order, each with data naming its chunk.
        for (int i = 4; i >= 0; i--) {
            Received r = received.get(i);
            ReadRequest req = (ReadRequest) r.message();
            ByteBuf data = Unpooled.copiedBuffer(String.format("chunk-%010d", req.chunk().index()), StandardCharsets.US_ASCII);
            r.channel().writeAndFlush(StorageResponse.ok(req.requestId(), req.op(), data));
        }
        for (int i = 0; i < 5; i++) {
            StorageResponse resp = futures.get(i).get(5, TimeUnit.SECONDS);
            try {
                assertTrue(resp.isOk());
                assertEquals(String.format("chunk-%010d", i), resp.data().toString(StandardCharsets.US_ASCII));
            } finally {
                resp.data().release();
            }
        }
    }

    @Test
    void requestsFromAnAttachedLoopUseAConnectionOnThatLoopAndCompleteThere() throws Exception {
        Map<String, byte[]> store = new ConcurrentHashMap<>();
        server = TestStorageServer.storing(store, 1 << 20);
        client = new StorageClient(Duration.ofSeconds(5), 1);
        io.netty.channel.EventLoopGroup portal = io.netty.channel.epoll.Epoll.isAvailable()
                ? new io.netty.channel.epoll.EpollEventLoopGroup(2) : new io.netty.channel.nio.NioEventLoopGroup(2);
        try {
            client.attachTo(portal);
            NodeAddress node = server.address();
            ByteBuf data = Unpooled.directBuffer().writeBytes("on the loop".getBytes(StandardCharsets.US_ASCII));
            assertTrue(client.write(node, CHAIN, new ChunkId(4, 0), 0, data).get(5, TimeUnit.SECONDS).isOk());
            assertEquals(1, client.connectionCount(), "a request from another thread: the client's own connection");
            List<Thread> completedOn = new java.util.concurrent.CopyOnWriteArrayList<>();
            for (io.netty.util.concurrent.EventExecutor loop : portal) {
                CompletableFuture<StorageResponse> answer = loop.submit(() -> client.read(node, CHAIN, new ChunkId(4, 0), 0, 11)
                        .whenComplete((r, e) -> completedOn.add(Thread.currentThread()))).get(5, TimeUnit.SECONDS);
                StorageResponse r = answer.get(5, TimeUnit.SECONDS);
                try {
                    assertEquals("on the loop", r.data().toString(StandardCharsets.US_ASCII));
                } finally {
                    r.data().release();
                }
                Thread loopThread = loop.submit(Thread::currentThread).get(5, TimeUnit.SECONDS);
                assertEquals(loopThread, completedOn.get(completedOn.size() - 1), "answer completes on the sending loop");
            }
            assertEquals(3, client.connectionCount(), "one connection per attached loop, plus the client's own");
            assertEquals(3, server.clients.size());
        } finally {
            client.close();
            portal.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    @Test
    void anAttachedLoopCountsTheAnswersItAwaitsUntilEachIsAnsweredTimesOutOrItsConnectionDrops() throws Exception {
        server = new TestStorageServer((ch, msg) -> received.add(new Received(ch, msg)));
        // Without direct answers: a connection would otherwise open with a registration this server never answers.
        client = new StorageClient(Duration.ofMillis(500), 1, false);
        // The portal's loops poll for answers as the gateway's do (AnswerSpin): requests still complete.
        io.netty.channel.EventLoopGroup portal = io.netty.channel.epoll.Epoll.isAvailable()
                ? new io.netty.channel.epoll.EpollEventLoopGroup(1, AnswerSpin.factory(AnswerSpin.DEFAULT_SPIN_NANOS,
                        AnswerSpin.DEFAULT_MAX_AWAITED))
                : new io.netty.channel.nio.NioEventLoopGroup(1);
        try {
            client.attachTo(portal);
            io.netty.util.concurrent.EventExecutor loop = portal.next();
            NodeAddress node = server.address();
            CompletableFuture<StorageResponse> answered = loop.submit(() -> client.ping(node)).get(5, TimeUnit.SECONDS);
            CompletableFuture<StorageResponse> timesOut = loop.submit(() -> client.ping(node)).get(5, TimeUnit.SECONDS);
            waitForRequests(2);
            assertEquals(2, loop.submit(AnswerSpin::awaited).get(5, TimeUnit.SECONDS));
            Received r = received.get(0);
            r.channel().writeAndFlush(StorageResponse.ok(r.message().requestId(), r.message().op()));
            assertTrue(answered.get(5, TimeUnit.SECONDS).isOk());
            assertEquals(1, loop.submit(AnswerSpin::awaited).get(5, TimeUnit.SECONDS));
            assertEquals(StorageRequestException.Kind.TIMEOUT, storageFailure(timesOut).kind());
            assertEquals(0, loop.submit(AnswerSpin::awaited).get(5, TimeUnit.SECONDS));

            CompletableFuture<StorageResponse> dropped = loop.submit(() -> client.ping(node)).get(5, TimeUnit.SECONDS);
            waitForRequests(3);
            assertEquals(1, loop.submit(AnswerSpin::awaited).get(5, TimeUnit.SECONDS));
            server.dropClients();
            assertEquals(StorageRequestException.Kind.CONNECTION_LOST, storageFailure(dropped).kind());
            assertEquals(0, loop.submit(AnswerSpin::awaited).get(5, TimeUnit.SECONDS));
        } finally {
            client.close();
            portal.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    @Test
    void writesCarryTheirPayloadAndErrorStatusesComeBackAsAnswers() throws Exception {
        Map<String, byte[]> store = new ConcurrentHashMap<>();
        server = TestStorageServer.storing(store, 1 << 20);
        client = new StorageClient(Duration.ofSeconds(5), 1);
        byte[] bytes = "hello chain".getBytes(StandardCharsets.US_ASCII);
        ByteBuf data = Unpooled.directBuffer().writeBytes(bytes);
        StorageResponse ok = client.write(server.address(), CHAIN, new ChunkId(3, 1), 100, data).get(5, TimeUnit.SECONDS);
        assertTrue(ok.isOk());
        assertEquals(0, data.refCnt(), "the client released the payload once sent");
        StorageResponse back = client.read(server.address(), CHAIN, new ChunkId(3, 1), 100, bytes.length).get(5, TimeUnit.SECONDS);
        assertArrayEquals(bytes, ByteBufUtil.getBytes(back.data()));
        back.data().release();
        server.close();

        server = new TestStorageServer((ch, msg) ->
                ch.writeAndFlush(StorageResponse.error(msg.requestId(), msg.op(), Status.STALE_CHAIN, "chain is at 2")));
        StorageResponse stale = client.ping(server.address()).get(5, TimeUnit.SECONDS);
        assertEquals(Status.STALE_CHAIN, stale.status());
        assertEquals("chain is at 2", stale.message());
    }

    @Test
    void aDroppedConnectionFailsEveryPendingRequestAndTheNextRequestReconnects() throws Exception {
        server = new TestStorageServer((ch, msg) -> received.add(new Received(ch, msg)));
        client = new StorageClient(Duration.ofSeconds(30), 1);
        NodeAddress node = server.address();
        CompletableFuture<StorageResponse> a = client.read(node, CHAIN, new ChunkId(1, 0), 0, 512);
        CompletableFuture<StorageResponse> b = client.write(node, CHAIN, new ChunkId(1, 0), 0,
                Unpooled.directBuffer(512).writeZero(512));
        waitForRequests(2);
        server.dropClients();
        assertEquals(StorageRequestException.Kind.CONNECTION_LOST, storageFailure(a).kind());
        assertEquals(StorageRequestException.Kind.CONNECTION_LOST, storageFailure(b).kind());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (client.connectionCount() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals(0, client.connectionCount(), "the dead connection is forgotten");

        CompletableFuture<StorageResponse> c = client.ping(node);
        waitForRequests(3);
        Received r = received.get(2);
        r.channel().writeAndFlush(StorageResponse.ok(r.message().requestId(), r.message().op()));
        assertTrue(c.get(5, TimeUnit.SECONDS).isOk());
    }

    @Test
    void aRequestWithoutAnswerTimesOutAndALateAnswerIsDropped() throws Exception {
        server = new TestStorageServer((ch, msg) -> received.add(new Received(ch, msg)));
        client = new StorageClient(Duration.ofMillis(200), 1);
        CompletableFuture<StorageResponse> f = client.read(server.address(), CHAIN, new ChunkId(1, 0), 0, 512);
        assertEquals(StorageRequestException.Kind.TIMEOUT, storageFailure(f).kind());
        Received r = received.get(0);
        ByteBuf late = Unpooled.directBuffer(512).writeZero(512);
        CountDownLatch sent = new CountDownLatch(1);
        r.channel().writeAndFlush(StorageResponse.ok(r.message().requestId(), r.message().op(), late))
                .addListener(x -> sent.countDown());
        assertTrue(sent.await(5, TimeUnit.SECONDS));
        // The connection survives a late answer: the next request works.
        CompletableFuture<StorageResponse> g = client.ping(server.address());
        waitForRequests(2);
        Received p = received.get(1);
        p.channel().writeAndFlush(StorageResponse.ok(p.message().requestId(), p.message().op()));
        assertTrue(g.get(5, TimeUnit.SECONDS).isOk());
    }

    @Test
    void aNodeThatIsNotListeningFailsToConnectAndTheWritePayloadIsReleased() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        client = new StorageClient(Duration.ofSeconds(2), 1);
        ByteBuf data = Unpooled.directBuffer(512).writeZero(512);
        CompletableFuture<StorageResponse> f = client.write(new NodeAddress("127.0.0.1", port), CHAIN,
                new ChunkId(1, 0), 0, data);
        assertEquals(StorageRequestException.Kind.CONNECT_FAILED, storageFailure(f).kind());
        assertEquals(0, data.refCnt());
        // The next request tries to connect again rather than reusing the failed attempt.
        try (TestStorageServer late = new TestStorageServer((ch, msg) ->
                ch.writeAndFlush(StorageResponse.ok(msg.requestId(), msg.op())))) {
            assertTrue(client.ping(late.address()).get(5, TimeUnit.SECONDS).isOk());
        }
        CompletableFuture<StorageResponse> again = client.ping(new NodeAddress("127.0.0.1", port));
        assertEquals(StorageRequestException.Kind.CONNECT_FAILED, storageFailure(again).kind());
    }

    @Test
    void requestsAfterCloseFailAndReleaseTheirPayload() {
        client = new StorageClient(Duration.ofSeconds(2), 1);
        client.close();
        ByteBuf data = Unpooled.directBuffer(512).writeZero(512);
        CompletableFuture<StorageResponse> f = client.write(new NodeAddress("127.0.0.1", 9), CHAIN,
                new ChunkId(1, 0), 0, data);
        assertEquals(StorageRequestException.Kind.CLIENT_CLOSED, storageFailure(f).kind());
        assertEquals(0, data.refCnt());
        client = null;
    }

    @Test
    void manyConcurrentRequestsToSeveralNodesAllGetTheirOwnAnswer() throws Exception {
        Map<String, byte[]> store = new ConcurrentHashMap<>();
        TestStorageServer other = TestStorageServer.storing(store, 4096);
        server = TestStorageServer.storing(store, 4096);
        client = new StorageClient(Duration.ofSeconds(5), 2);
        try {
            Map<Integer, CompletableFuture<StorageResponse>> writes = new HashMap<>();
            for (int i = 0; i < 200; i++) {
                NodeAddress node = (i % 2 == 0 ? server : other).address();
                ByteBuf data = Unpooled.directBuffer(4).writeInt(i);
                writes.put(i, client.write(node, CHAIN, new ChunkId(7, i), 0, data));
            }
            for (CompletableFuture<StorageResponse> w : writes.values()) {
                assertTrue(w.get(5, TimeUnit.SECONDS).isOk());
            }
            assertEquals(2, client.connectionCount());
            for (int i = 0; i < 200; i++) {
                NodeAddress node = (i % 2 == 1 ? server : other).address();
                StorageResponse r = client.read(node, CHAIN, new ChunkId(7, i), 0, 4).get(5, TimeUnit.SECONDS);
                assertEquals(i, r.data().getInt(0));
                r.data().release();
            }
            assertFalse(store.isEmpty());
        } finally {
            other.close();
        }
    }

    @Test
    void requestsRacingToAFreshNodeShareOneConnection() throws Exception {
        server = new TestStorageServer((ch, msg) -> ch.writeAndFlush(StorageResponse.ok(msg.requestId(), msg.op())));
        client = new StorageClient(Duration.ofSeconds(5), 2);
        NodeAddress node = server.address();
        int threads = 8;
        List<CompletableFuture<StorageResponse>> all = new CopyOnWriteArrayList<>();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> senders = new java.util.ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread th = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < 50; i++) {
                    all.add(client.ping(node));
                }
            });
            th.start();
            senders.add(th);
        }
        go.countDown();
        for (Thread th : senders) {
            th.join(5000);
        }
        assertEquals(threads * 50, all.size());
        for (CompletableFuture<StorageResponse> f : all) {
            assertTrue(f.get(5, TimeUnit.SECONDS).isOk());
        }
        assertEquals(1, server.clients.size(), "one connection despite the race");
    }
}
