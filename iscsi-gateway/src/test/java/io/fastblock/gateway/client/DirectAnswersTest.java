package io.fastblock.gateway.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.AnswerToRequest;
import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.OpCode;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.WriteRequest;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The gateway side of direct answers, against real sockets: a head that answers only writes not
 * flagged for a direct answer (as a real head stays silent once the tail answered), and a tail
 * that takes registrations and answers when the test says so.
 */
class DirectAnswersTest {
    private static final ChainAddress CHAIN = new ChainAddress(1, 1, 0);
    private static final ChunkId CHUNK = new ChunkId(4, 0);

    private final List<WriteRequest> atHead = new CopyOnWriteArrayList<>();
    private final Map<Long, Channel> registered = new ConcurrentHashMap<>();
    private TestStorageServer head;
    private TestStorageServer tail;
    private StorageClient client;
    private EventLoopGroup portal;

    @BeforeEach
    void start() {
        head = new TestStorageServer((ch, msg) -> {
            if (msg instanceof WriteRequest w) {
                w.data().release();
                atHead.add(w);
                if (!w.answerDirect()) {
                    ch.writeAndFlush(StorageResponse.ok(w.requestId(), OpCode.WRITE));
                }
            } else {
                ch.writeAndFlush(StorageResponse.ok(msg.requestId(), msg.op()));
            }
        });
        tail = new TestStorageServer((ch, msg) -> {
            if (msg instanceof AnswerToRequest a) {
                registered.put(a.clientId(), ch);
            }
            ch.writeAndFlush(StorageResponse.ok(msg.requestId(), msg.op()));
        });
        portal = io.netty.channel.epoll.Epoll.isAvailable()
                ? new io.netty.channel.epoll.EpollEventLoopGroup(1) : new io.netty.channel.nio.NioEventLoopGroup(1);
    }

    @AfterEach
    void stop() {
        if (client != null) {
            client.close();
        }
        head.close();
        tail.close();
        portal.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    private CompletableFuture<StorageResponse> writeFromLoop(byte value) throws Exception {
        return writeFromLoop(head.address(), value);
    }

    private CompletableFuture<StorageResponse> writeFromLoop(NodeAddress toHead, byte value) throws Exception {
        EventLoop loop = portal.next();
        return loop.submit(() -> client.write(toHead, tail.address(), CHAIN, CHUNK, 0,
                Unpooled.wrappedBuffer(new byte[] {value}))).get(5, TimeUnit.SECONDS);
    }

    /** Writes until one goes out flagged (the tail's connection registered), answering the others at the head. */
    private WriteRequest firstDirectWrite(List<CompletableFuture<StorageResponse>> sent) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (System.nanoTime() < deadline) {
            int before = atHead.size();
            CompletableFuture<StorageResponse> f = writeFromLoop((byte) 1);
            sent.add(f);
            while (atHead.size() == before && System.nanoTime() < deadline) {
                Thread.sleep(2);
            }
            WriteRequest w = atHead.get(atHead.size() - 1);
            if (w.answerDirect()) {
                return w;
            }
            assertTrue(f.get(5, TimeUnit.SECONDS).isOk());
        }
        throw new AssertionError("no write asked for a direct answer within 5 s");
    }

    @Test
    void onceTheTailTookTheLoopsIdItsAnswerCompletesTheWrite() throws Exception {
        client = new StorageClient(Duration.ofSeconds(5), 1, true);
        client.attachTo(portal);
        List<CompletableFuture<StorageResponse>> sent = new CopyOnWriteArrayList<>();
        WriteRequest w = firstDirectWrite(sent);
        assertEquals(1, registered.size());
        long clientId = registered.keySet().iterator().next();
        assertEquals(clientId, w.answerTo(), "the write names the id the loop registered at the tail");
        assertEquals(w.requestId(), w.answerId());
        CompletableFuture<StorageResponse> pending = sent.get(sent.size() - 1);
        Thread.sleep(50);
        assertFalse(pending.isDone(), "the head stays silent: only the tail's answer completes it");
        registered.get(clientId).writeAndFlush(StorageResponse.ok(w.answerId(), OpCode.WRITE));
        assertTrue(pending.get(5, TimeUnit.SECONDS).isOk());
        // A late OK from the head as well (it could not know the tail's answer arrived) is dropped.
        head.clients.keySet().forEach(ch -> ch.writeAndFlush(StorageResponse.ok(w.requestId(), OpCode.WRITE)));
        int before = atHead.size();
        CompletableFuture<StorageResponse> next = writeFromLoop((byte) 2);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (atHead.size() == before && System.nanoTime() < deadline) {
            Thread.sleep(2);
        }
        WriteRequest second = atHead.get(atHead.size() - 1);
        assertTrue(second.answerDirect());
        registered.get(clientId).writeAndFlush(StorageResponse.ok(second.answerId(), OpCode.WRITE));
        assertTrue(next.get(5, TimeUnit.SECONDS).isOk());
    }

    @Test
    void aWriteWhoseTailConnectionClosesFailsAsALostConnectionSoItIsResent() throws Exception {
        client = new StorageClient(Duration.ofSeconds(30), 1, true);
        client.attachTo(portal);
        List<CompletableFuture<StorageResponse>> sent = new CopyOnWriteArrayList<>();
        firstDirectWrite(sent);
        CompletableFuture<StorageResponse> pending = sent.get(sent.size() - 1);
        registered.values().forEach(Channel::close);
        ExecutionException e = assertThrows(ExecutionException.class, () -> pending.get(5, TimeUnit.SECONDS));
        StorageRequestException lost = assertInstanceOf(StorageRequestException.class, e.getCause());
        assertEquals(StorageRequestException.Kind.CONNECTION_LOST, lost.kind());
        assertTrue(lost.getMessage().contains("tail"), lost.getMessage());
    }

    @Test
    void writesFromOtherThreadsOrWithDirectAnswersOffGoThroughTheHead() throws Exception {
        client = new StorageClient(Duration.ofSeconds(5), 1, true);
        client.attachTo(portal);
        for (int i = 0; i < 20; i++) {
            assertTrue(client.write(head.address(), tail.address(), CHAIN, CHUNK, 0, Unpooled.wrappedBuffer(new byte[] {3}))
                    .get(5, TimeUnit.SECONDS).isOk());
        }
        client.close();
        client = new StorageClient(Duration.ofSeconds(5), 1, false);
        client.attachTo(portal);
        for (int i = 0; i < 20; i++) {
            assertTrue(writeFromLoop((byte) 4).get(5, TimeUnit.SECONDS).isOk());
        }
        assertEquals(40, atHead.size());
        assertTrue(atHead.stream().noneMatch(WriteRequest::answerDirect));
        assertTrue(registered.isEmpty(), "no client id is registered with direct answers off");
    }

    @Test
    void aWriteThatCannotReachItsHeadWaitsForNoDirectAnswer() throws Exception {
        client = new StorageClient(Duration.ofSeconds(5), 1, true);
        client.attachTo(portal);
        List<CompletableFuture<StorageResponse>> sent = new CopyOnWriteArrayList<>();
        WriteRequest w = firstDirectWrite(sent);
        registered.values().iterator().next().writeAndFlush(StorageResponse.ok(w.answerId(), OpCode.WRITE));
        assertTrue(sent.get(sent.size() - 1).get(5, TimeUnit.SECONDS).isOk());
        NodeAddress deadHead;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            deadHead = new NodeAddress("127.0.0.1", s.getLocalPort());
        }
        EventLoop loop = portal.next(); // the group has one loop
        for (int i = 0; i < 5; i++) {
            CompletableFuture<StorageResponse> f = writeFromLoop(deadHead, (byte) 5);
            ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(5, TimeUnit.SECONDS));
            assertEquals(StorageRequestException.Kind.CONNECT_FAILED,
                    assertInstanceOf(StorageRequestException.class, e.getCause()).kind());
        }
        assertEquals(0, loop.submit(() -> client.directWaiting(loop)).get(5, TimeUnit.SECONDS));
    }
}
