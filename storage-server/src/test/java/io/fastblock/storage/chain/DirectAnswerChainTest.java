package io.fastblock.storage.chain;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.AnswerToRequest;
import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.OpCode;
import io.fastblock.protocol.PingRequest;
import io.fastblock.protocol.Status;
import io.fastblock.protocol.StorageMessage;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.WriteRequest;
import io.fastblock.protocol.client.BlockingStorageClient;
import io.fastblock.protocol.codec.StorageFrames;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.ZkPaths;
import io.fastblock.storage.StorageServer;
import io.fastblock.storage.StorageServerConfig;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Direct answers through a chain of three real storage servers (real ZooKeeper, sockets, files,
 * RocksDB): the tail sends a registered client the OK of its write and the head sends none; without
 * a registration, and for errors, the head answers as before.
 */
class DirectAnswerChainTest {
    private static final int GROUP = 1;
    private static final ChainAddress CHAIN = new ChainAddress(GROUP, 1, 1);
    private static final ChunkId CHUNK = new ChunkId(7, 0);
    private static final long CLIENT = 0x5eed_0001L;

    @TempDir
    Path dir;
    TestingServer zkServer;
    CuratorFramework zk;
    final List<StorageServer> servers = new ArrayList<>();
    final List<FrameSocket> sockets = new ArrayList<>();

    /** A client that speaks raw frames, so the test sees exactly what each server sends it. */
    static final class FrameSocket implements AutoCloseable {
        final Socket socket;
        final DataInputStream in;
        final OutputStream out;

        FrameSocket(int port) throws IOException {
            socket = new Socket("127.0.0.1", port);
            socket.setSoTimeout(10_000);
            in = new DataInputStream(socket.getInputStream());
            out = socket.getOutputStream();
        }

        void send(StorageMessage m) throws IOException {
            ByteBuf frame = StorageFrames.encode(m, ByteBufAllocator.DEFAULT);
            try {
                byte[] bytes = new byte[frame.readableBytes()];
                frame.readBytes(bytes);
                out.write(bytes);
                out.flush();
            } finally {
                frame.release();
            }
        }

        StorageResponse next() throws IOException {
            int length = in.readInt();
            byte[] body = new byte[length];
            in.readFully(body);
            ByteBuf frame = Unpooled.buffer(4 + length).writeInt(length).writeBytes(body);
            try {
                return assertInstanceOf(StorageResponse.class, StorageFrames.decode(frame));
            } finally {
                frame.release();
            }
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    @BeforeEach
    void start() throws Exception {
        zkServer = new TestingServer(true);
        zk = CuratorFrameworkFactory.newClient(zkServer.getConnectString(), new RetryOneTime(100));
        zk.start();
        zk.create().creatingParentsIfNeeded().forPath(ZkPaths.group(GROUP),
                MetaJson.write(new GroupRecord(GROUP, 1, List.of("a", "b", "c"))));
        for (String id : List.of("a", "b", "c")) {
            StorageServerConfig config = new StorageServerConfig(id, dir.resolve(id), "127.0.0.1", 0,
                    zkServer.getConnectString(), 1 << 20, new ChainLimits(1024, 64L << 20, 10_000, 100, 1 << 20));
            // The head's chunk file of CHUNK can be made to refuse writes, as a full disk would.
            servers.add(id.equals("a") ? StorageServer.start(config, failingChunkWrites()) : StorageServer.start(config));
        }
    }

    @AfterEach
    void stop() throws Exception {
        for (FrameSocket s : sockets) {
            s.close();
        }
        servers.forEach(StorageServer::close);
        zk.close();
        zkServer.close();
    }

    private final java.util.concurrent.atomic.AtomicBoolean headDiskFull = new java.util.concurrent.atomic.AtomicBoolean();

    private io.fastblock.storage.io.FileIoFactory failingChunkWrites() {
        io.fastblock.storage.io.FileIoFactory disk = io.fastblock.storage.io.FileIoFactory.real();
        Path chunkFile = Path.of(Long.toString(CHUNK.volumeId()), Long.toString(CHUNK.index()));
        return new io.fastblock.storage.io.ForwardingFileIoFactory(disk) {
            @Override
            public io.fastblock.storage.io.FileIo open(Path file, boolean create) throws IOException {
                io.fastblock.storage.io.FileIo real = disk.open(file, create);
                if (!file.endsWith(chunkFile)) {
                    return real;
                }
                return new io.fastblock.storage.io.ForwardingFileIo(real) {
                    @Override
                    public int write(java.nio.ByteBuffer src, long position) throws IOException {
                        if (headDiskFull.get()) {
                            throw new IOException("No space left on device (injected)");
                        }
                        return super.write(src, position);
                    }
                };
            }
        };
    }

    private FrameSocket connect(int server) throws IOException {
        FrameSocket s = new FrameSocket(servers.get(server).port());
        sockets.add(s);
        return s;
    }

    private static WriteRequest write(long id, ChainAddress chain, long offset, byte[] data) {
        return new WriteRequest(id, 0, chain, CHUNK, offset, 0, Unpooled.wrappedBuffer(data)).answeredDirectlyTo(CLIENT, id);
    }

    private FrameSocket registeredAtTail() throws IOException {
        FrameSocket tail = connect(2);
        tail.send(new AnswerToRequest(1, CLIENT));
        StorageResponse ok = tail.next();
        assertEquals(1, ok.requestId());
        assertTrue(ok.isOk(), ok.message());
        return tail;
    }

    /**
     * Sends a plain write after the direct one: the chain answers the head in order, and the head
     * writes its answers in that order, so an answer to the direct write would come first.
     */
    private static StorageResponse nextAfterPlainWrite(FrameSocket head, long id) throws IOException {
        head.send(new WriteRequest(id, 0, CHAIN, CHUNK, 1 << 20, 0, Unpooled.wrappedBuffer(new byte[] {4})));
        return head.next();
    }

    /** The next frame on {@code s} answers a PING sent now: nothing else was sent there before it. */
    private static void assertNothingElseSent(FrameSocket s, long pingId) throws IOException {
        s.send(new PingRequest(pingId));
        StorageResponse next = s.next();
        assertEquals(OpCode.PING, next.op(), "unexpected " + next.op() + " answer " + next.requestId() + " " + next.status());
        assertEquals(pingId, next.requestId());
    }

    private byte[] readBack(int server, long offset, int length) throws IOException {
        try (BlockingStorageClient c = new BlockingStorageClient("127.0.0.1", servers.get(server).port(), Duration.ofSeconds(10))) {
            return c.read(CHAIN, CHUNK, offset, length);
        }
    }

    @Test
    void theTailAnswersARegisteredClientAndTheHeadSendsNothing() throws Exception {
        FrameSocket tail = registeredAtTail();
        FrameSocket head = connect(0);
        byte[] data = new byte[4096];
        Arrays.fill(data, (byte) 0x5a);
        head.send(write(10, CHAIN, 8192, data));
        StorageResponse direct = tail.next();
        assertEquals(10, direct.requestId());
        assertEquals(OpCode.WRITE, direct.op());
        assertTrue(direct.isOk(), direct.message());
        StorageResponse next = nextAfterPlainWrite(head, 11);
        assertEquals(11, next.requestId(), "the head answered the write the tail answered");
        assertTrue(next.isOk(), next.message());
        assertFalse(next.answered());
        for (int server = 0; server < 3; server++) {
            assertArrayEquals(data, readBack(server, 8192, 4096), "replica " + server);
        }
    }

    @Test
    void withoutARegistrationTheHeadAnswers() throws Exception {
        FrameSocket other = connect(2); // a connection to the tail that registered nothing
        FrameSocket head = connect(0);
        head.send(write(20, CHAIN, 0, new byte[] {1, 2, 3}));
        StorageResponse answer = head.next();
        assertEquals(20, answer.requestId());
        assertTrue(answer.isOk(), answer.message());
        assertFalse(answer.answered());
        assertNothingElseSent(other, 21);
        assertArrayEquals(new byte[] {1, 2, 3}, readBack(2, 0, 3));
    }

    @Test
    void aRegistrationEndsWithItsConnection() throws Exception {
        FrameSocket tail = registeredAtTail();
        tail.close();
        FrameSocket head = connect(0);
        long deadline = System.nanoTime() + 10_000_000_000L;
        // The server learns of the close asynchronously; until then the tail may still try the old connection.
        // The server learns of the close asynchronously; until then the tail may still try the old
        // connection (and the head stay silent). Every write here was sent after the close.
        for (long id = 30; ; id += 2) {
            head.send(write(id, CHAIN, 0, new byte[] {9}));
            head.send(new WriteRequest(id + 1, 0, CHAIN, CHUNK, 1 << 20, 0, Unpooled.wrappedBuffer(new byte[] {4})));
            StorageResponse r;
            do {
                r = head.next();
                assertTrue(r.isOk(), r.message());
                if (r.requestId() % 2 == 0) {
                    return; // the head answered a direct write itself: the tail had no registration left
                }
            } while (r.requestId() != id + 1);
            assertTrue(System.nanoTime() < deadline, "the head never answered a write once the client's tail connection closed");
        }
    }

    /**
     * A write the tail answered directly leaves the head's count of unanswered requests as it found
     * it: the count stops the head reading a connection at its bound, and once went down twice for
     * each such write, so a gateway's connection was never paused however much it sent.
     */
    @Test
    void directlyAnsweredWritesLeaveNoUnansweredRequestsCountedAtTheHead() throws Exception {
        FrameSocket tail = registeredAtTail();
        FrameSocket head = connect(0);
        for (long id = 70; id < 90; id++) {
            head.send(write(id, CHAIN, 4096 * (id - 70), new byte[4096]));
            assertEquals(id, tail.next().requestId());
        }
        StorageResponse plain = nextAfterPlainWrite(head, 90);
        assertEquals(90, plain.requestId(), "the head answered none of the direct writes");
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (servers.get(0).unansweredRequests() != 0 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertEquals(0, servers.get(0).unansweredRequests());
    }

    @Test
    void errorsStillComeFromTheHeadAndNotFromTheTail() throws Exception {
        FrameSocket tail = registeredAtTail();
        FrameSocket head = connect(0);
        head.send(write(40, new ChainAddress(GROUP, 7, 1), 0, new byte[] {1}));
        StorageResponse answer = head.next();
        assertEquals(40, answer.requestId());
        assertEquals(Status.STALE_CHAIN, answer.status(), answer.message());
        assertNothingElseSent(tail, 41);
    }

    @Test
    void aDirectWriteSentToTheMiddleIsRefusedByIt() throws Exception {
        FrameSocket tail = registeredAtTail();
        FrameSocket middle = connect(1);
        middle.send(write(50, CHAIN, 0, new byte[] {1}));
        StorageResponse answer = middle.next();
        assertEquals(Status.BAD_REQUEST, answer.status(), answer.message());
        assertNothingElseSent(tail, 51);
    }

    /**
     * The head's own in-place write fails after the tail answered the client: the head must not
     * serve its stale copy. Its reads of the chunk go to the tail, and once the write has settled
     * the chunk is copied back from the tail.
     */
    @Test
    void aHeadWhoseOwnWriteFailedServesTheChunkFromTheTailUntilResynced() throws Exception {
        FrameSocket tail = registeredAtTail();
        FrameSocket head = connect(0);
        byte[] before = new byte[4096];
        Arrays.fill(before, (byte) 1);
        head.send(write(60, CHAIN, 8192, before));
        assertEquals(60, tail.next().requestId());
        // The tail may answer before the head's own copy of 60 is written (the chunk's first write
        // saves a dirty record first, off the network thread): a read on the head's stripe is
        // ordered behind it, so once it returns the disk can fill without failing 60 too.
        ByteBuf settled = servers.get(0).chunkStore().readAsync(CHUNK, 8192, 4096, ByteBufAllocator.DEFAULT).get();
        settled.release();
        byte[] after = new byte[4096];
        Arrays.fill(after, (byte) 2);
        headDiskFull.set(true);
        head.send(write(61, CHAIN, 8192, after));
        StorageResponse direct = tail.next();
        assertEquals(61, direct.requestId());
        assertTrue(direct.isOk(), "the tail has the write: " + direct.message());
        StorageResponse fromHead = head.next();
        assertEquals(61, fromHead.requestId());
        assertEquals(Status.IO_ERROR, fromHead.status(), "the head still reports its own failure: " + fromHead.message());
        assertArrayEquals(after, readBack(0, 8192, 4096), "the head answered a read from its stale copy");
        headDiskFull.set(false);
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (servers.get(0).chunkStore().isResyncing(CHUNK)) {
            assertTrue(System.nanoTime() < deadline, "the head never resynced the chunk");
            Thread.sleep(10);
        }
        ByteBuf local = servers.get(0).chunkStore().readAsync(CHUNK, 8192, 4096, ByteBufAllocator.DEFAULT).get();
        try {
            byte[] bytes = new byte[4096];
            local.getBytes(local.readerIndex(), bytes);
            assertArrayEquals(after, bytes, "the resync copied the tail's bytes into the head's file");
        } finally {
            local.release();
        }
        assertArrayEquals(after, readBack(0, 8192, 4096));
    }
}
