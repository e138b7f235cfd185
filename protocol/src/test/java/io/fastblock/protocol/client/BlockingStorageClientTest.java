package io.fastblock.protocol.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.Extents;
import io.fastblock.protocol.ExtentsRequest;
import io.fastblock.protocol.FenceRequest;
import io.fastblock.protocol.ReadRequest;
import io.fastblock.protocol.Status;
import io.fastblock.protocol.StorageMessage;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.WriteRequest;
import io.fastblock.protocol.codec.StorageFrames;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The client against a tiny real socket server speaking the frame codec (the storage server's own
 * handling is tested in storage-server).
 */
class BlockingStorageClientTest {
    private static final ChainAddress CHAIN = new ChainAddress(1, 2, 3);
    private static final ChunkId CHUNK = new ChunkId(4, 5);

    private final List<StorageMessage> received = new CopyOnWriteArrayList<>();
    private final CountDownLatch release = new CountDownLatch(1);
    private ServerSocket server;
    private Thread acceptor;

    /** Serves every connection with {@code answer}; a null answer means "never answer". */
    private void serve(Function<StorageMessage, StorageResponse> answer) throws IOException {
        server = new ServerSocket(0, 10, InetAddress.getLoopbackAddress());
        acceptor = new Thread(() -> {
            while (!server.isClosed()) {
                try (Socket s = server.accept()) {
                    DataInputStream in = new DataInputStream(s.getInputStream());
                    OutputStream out = s.getOutputStream();
                    while (true) {
                        int len = in.readInt();
                        byte[] frame = new byte[4 + len];
                        in.readFully(frame, 4, len);
                        ByteBuf buf = Unpooled.wrappedBuffer(frame);
                        buf.setInt(0, len);
                        StorageMessage m = StorageFrames.decode(buf);
                        received.add(m);
                        StorageResponse r = answer.apply(m);
                        if (r == null) {
                            release.await();
                            break;
                        }
                        ByteBuf enc = StorageFrames.encode(r, UnpooledByteBufAllocator.DEFAULT);
                        out.write(ByteBufUtil.getBytes(enc));
                        enc.release();
                        out.flush();
                    }
                } catch (IOException | InterruptedException e) {
                    // connection closed by the client or the test ends
                }
            }
        }, "tiny-storage-server");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    private BlockingStorageClient client(Duration timeout) {
        return new BlockingStorageClient("127.0.0.1", server.getLocalPort(), timeout);
    }

    @AfterEach
    void stop() throws IOException {
        release.countDown();
        if (server != null) {
            server.close();
        }
    }

    @Test
    void everyOpSendsItsFrameAndDecodesItsAnswer() throws Exception {
        Extents extents = new Extents.Builder().add(0, 4096).add(8192, 4096).build();
        serve(m -> {
            if (m instanceof ExtentsRequest e) {
                ByteBuf data = Unpooled.buffer();
                extents.encode(data);
                return StorageResponse.ok(e.requestId(), e.op(), data);
            }
            if (m instanceof ReadRequest r) {
                ByteBuf data = Unpooled.buffer();
                if (r.wantsExtents()) {
                    extents.encode(data);
                }
                data.writeBytes(new byte[] {1, 2, 3});
                return StorageResponse.ok(r.requestId(), r.op(), data);
            }
            return StorageResponse.ok(m.requestId(), m.op());
        });
        try (BlockingStorageClient c = client(Duration.ofSeconds(10))) {
            c.ping();
            c.fence(77, 9);
            assertEquals(extents, c.extents(CHAIN, CHUNK, 0, 16384));
            c.trim(CHAIN, CHUNK, 4096, 8192);
            c.write(CHAIN, CHUNK, 0, new byte[] {5, 6});
            assertArrayEquals(new byte[] {1, 2, 3}, c.read(CHAIN, CHUNK, 0, 3));
            ExtentsAndData both = c.readWithExtents(CHAIN, CHUNK, 0, 3);
            assertEquals(extents, both.extents());
            assertArrayEquals(new byte[] {1, 2, 3}, both.data());
        }
        assertEquals(new FenceRequest(2, 77, 9), received.get(1));
        WriteRequest trim = assertInstanceOf(WriteRequest.class, received.get(3));
        assertTrue(trim.isTrim());
        assertEquals(8192, trim.length());
        assertEquals(4096, trim.offset());
        WriteRequest write = assertInstanceOf(WriteRequest.class, received.get(4));
        assertArrayEquals(new byte[] {5, 6}, ByteBufUtil.getBytes(write.data()));
        assertTrue(assertInstanceOf(ReadRequest.class, received.get(6)).wantsExtents());
    }

    @Test
    void aRefusalCarriesTheStatusAndMessage() throws Exception {
        serve(m -> StorageResponse.error(m.requestId(), m.op(), Status.STALE_EPOCH, "volume 77 is sealed"));
        try (BlockingStorageClient c = client(Duration.ofSeconds(10))) {
            StorageStatusException e = assertThrows(StorageStatusException.class, () -> c.trim(CHAIN, CHUNK, 0, 4096));
            assertEquals(Status.STALE_EPOCH, e.status());
            assertTrue(e.getMessage().contains("sealed"), e.getMessage());
            // the connection stays usable after a refusal
            assertThrows(StorageStatusException.class, () -> c.fence(1, 1));
        }
    }

    @Test
    void aSilentServerTimesOutAndTheNextCallReconnects() throws Exception {
        serve(m -> m instanceof FenceRequest ? null : StorageResponse.ok(m.requestId(), m.op()));
        try (BlockingStorageClient c = client(Duration.ofMillis(300))) {
            SocketTimeoutException e = assertThrows(SocketTimeoutException.class, () -> c.fence(1, 2));
            assertTrue(e.getMessage().contains("FENCE"), e.getMessage());
            release.countDown();
            c.ping();
        }
    }

    @Test
    void anAnswerToAnotherRequestIsAProtocolError() throws Exception {
        serve(m -> StorageResponse.ok(m.requestId() + 100, m.op()));
        try (BlockingStorageClient c = client(Duration.ofSeconds(10))) {
            assertThrows(io.fastblock.protocol.ProtocolException.class, c::ping);
        }
    }

    @Test
    void aClosedClientRefusesCalls() throws Exception {
        serve(m -> StorageResponse.ok(m.requestId(), m.op()));
        BlockingStorageClient c = client(Duration.ofSeconds(10));
        c.close();
        assertThrows(IOException.class, c::ping);
    }
}
