package io.fastblock.storage.net;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.OpCode;
import io.fastblock.protocol.PingRequest;
import io.fastblock.protocol.StorageMessage;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.codec.StorageFrames;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoopGroup;
import java.io.DataInputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Request deadlines are checked by one periodic sweep per connection. A peer on a real socket
 * reads every frame and answers only pings whose request id is odd, so some requests stay
 * unanswered for ever.
 */
class StorageClientTimeoutTest {
    private ServerSocket listener;
    private Thread peer;
    private EventLoopGroup loop;

    @BeforeEach
    void start() throws Exception {
        listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        peer = new Thread(this::serve, "silent-peer");
        peer.setDaemon(true);
        peer.start();
        loop = NettyTransport.group(1, "timeout-client");
    }

    @AfterEach
    void stop() throws Exception {
        listener.close();
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }

    private void serve() {
        try (Socket s = listener.accept(); DataInputStream in = new DataInputStream(s.getInputStream());
             OutputStream out = s.getOutputStream()) {
            while (true) {
                int length = in.readInt();
                byte[] body = new byte[length];
                in.readFully(body);
                ByteBuf frame = Unpooled.buffer(4 + length).writeInt(length).writeBytes(body);
                StorageMessage m = StorageFrames.decode(frame);
                frame.release();
                if (m.requestId() % 2 == 1) {
                    ByteBuf answer = StorageFrames.encode(StorageResponse.ok(m.requestId(), OpCode.PING), ByteBufAllocator.DEFAULT);
                    byte[] bytes = new byte[answer.readableBytes()];
                    answer.readBytes(bytes);
                    answer.release();
                    out.write(bytes);
                    out.flush();
                }
            }
        } catch (Exception closed) {
            // the test is over
        }
    }

    @Test
    void anUnansweredRequestFailsAfterItsTimeoutAndAnAnsweredOneDoesNot() throws Exception {
        StorageClient client = StorageClient.connect(loop, "127.0.0.1", listener.getLocalPort()).awaitConnected(10, TimeUnit.SECONDS);
        try {
            CompletableFuture<StorageResponse> answered = client.send(PingRequest::new, 200); // id 1
            CompletableFuture<StorageResponse> ignored = client.send(PingRequest::new, 200); // id 2
            CompletableFuture<StorageResponse> untimed = client.send(PingRequest::new); // id 3: answered
            CompletableFuture<StorageResponse> waiting = client.send(PingRequest::new); // id 4: no timeout, no answer
            assertTrue(answered.get(10, TimeUnit.SECONDS).isOk());
            assertTrue(untimed.get(10, TimeUnit.SECONDS).isOk());
            long start = System.nanoTime();
            ExecutionException e = assertThrows(ExecutionException.class, () -> ignored.get(10, TimeUnit.SECONDS));
            assertInstanceOf(TimeoutException.class, e.getCause());
            long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(waited < 5_000, "the timeout fired after " + waited + " ms");
            Thread.sleep(300);
            assertFalse(waiting.isDone(), "a request without a timeout was failed");
        } finally {
            client.close();
        }
    }

    @Test
    void theTimeoutIsNotEarly() throws Exception {
        StorageClient client = StorageClient.connect(loop, "127.0.0.1", listener.getLocalPort()).awaitConnected(10, TimeUnit.SECONDS);
        try {
            client.send(PingRequest::new).get(10, TimeUnit.SECONDS); // id 1, answered: the peer is there
            long start = System.nanoTime();
            CompletableFuture<StorageResponse> ignored = client.send(PingRequest::new, 400); // id 2
            assertThrows(ExecutionException.class, () -> ignored.get(10, TimeUnit.SECONDS));
            long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(waited >= 400, "failed after " + waited + " ms, before its 400 ms");
        } finally {
            client.close();
        }
    }

    @Test
    void connectingThroughALoopThatShutDownDoesNotThrow() throws Exception {
        EventLoopGroup gone = NettyTransport.group(1, "gone-client");
        gone.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        // The sweep cannot be scheduled there; the connection fails on its own (as it did before sweeps).
        StorageClient client = StorageClient.connect(gone, "127.0.0.1", listener.getLocalPort());
        assertFalse(client.ready().isDone() && !client.ready().isCompletedExceptionally(), "connected through a dead loop");
    }
}
