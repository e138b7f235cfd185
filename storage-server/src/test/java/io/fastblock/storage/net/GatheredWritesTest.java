package io.fastblock.storage.net;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.ReadRequest;
import io.fastblock.protocol.Status;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.WriteRequest;
import io.fastblock.protocol.codec.StorageFrames;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.ZkPaths;
import io.fastblock.storage.StorageServer;
import io.fastblock.storage.StorageServerConfig;
import io.fastblock.storage.chain.ChainLimits;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoopGroup;
import java.io.DataInputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The server keeps a large write's data as the socket read buffers it arrived in (a gathered frame):
 * writes sent in small pieces, so that one frame spans many reads and a 4 KiB block spans two read
 * buffers, whole-block and partial-block, must read back byte for byte. Real server, ZooKeeper,
 * sockets and files.
 */
class GatheredWritesTest {
    private static final int MIB = 1 << 20;
    private static final ChainAddress CHAIN = new ChainAddress(1, 1, 1);
    private static final ChunkId CHUNK = new ChunkId(7, 0);

    @TempDir
    Path dir;

    /** Sends one frame in pieces of {@code piece} bytes, flushing each, and reads the answer's status. */
    private static void sendInPieces(Socket s, WriteRequest w, int piece) throws Exception {
        ByteBuf frame = StorageFrames.encode(w, ByteBufAllocator.DEFAULT);
        byte[] bytes = new byte[frame.readableBytes()];
        frame.readBytes(bytes);
        frame.release();
        OutputStream out = s.getOutputStream();
        for (int at = 0; at < bytes.length; at += piece) {
            out.write(bytes, at, Math.min(piece, bytes.length - at));
            out.flush();
        }
        DataInputStream in = new DataInputStream(s.getInputStream());
        int length = in.readInt();
        byte[] answer = new byte[length];
        in.readFully(answer);
        ByteBuf whole = Unpooled.buffer(4 + length).writeInt(length).writeBytes(answer);
        StorageResponse r = (StorageResponse) StorageFrames.decode(whole);
        assertEquals(Status.OK, r.status(), r.message());
        r.data().release();
        whole.release();
    }

    @Test
    void writesArrivingInManyReadsReadBackExactly() throws Exception {
        Random random = new Random(42);
        byte[] image = new byte[4 * MIB];
        try (TestingServer zkServer = new TestingServer(true);
             CuratorFramework zk = CuratorFrameworkFactory.newClient(zkServer.getConnectString(), new RetryOneTime(100))) {
            zk.start();
            zk.create().creatingParentsIfNeeded().forPath(ZkPaths.group(1), MetaJson.write(new GroupRecord(1, 1, List.of("a"))));
            try (StorageServer server = StorageServer.start(new StorageServerConfig("a", dir.resolve("a"), "127.0.0.1", 0,
                    zkServer.getConnectString(), 64L * MIB, new ChainLimits(1024, 64L << 20, 3_000, 100, 1 << 20)));
                 Socket s = new Socket(InetAddress.getLoopbackAddress(), server.port())) {
                s.setTcpNoDelay(true);
                // {offset, length, piece size}: whole blocks; a partial first and last block; odd pieces.
                long[][] writes = {{0, MIB, 1000}, {MIB + 1000, 3 * 65536 + 123, 4093}, {2 * MIB, 2 * MIB, 65536 + 7},
                        {512, 100_000, 777}};
                long id = 1;
                for (long[] w : writes) {
                    byte[] data = new byte[(int) w[1]];
                    random.nextBytes(data);
                    System.arraycopy(data, 0, image, (int) w[0], data.length);
                    sendInPieces(s, new WriteRequest(id, 0, CHAIN, CHUNK, w[0], 0, Unpooled.wrappedBuffer(data)), (int) w[2]);
                    id++;
                }
            }
            // Read back through a fresh server on the same data: what was acknowledged is on disk.
            try (StorageServer server = StorageServer.start(new StorageServerConfig("a", dir.resolve("a"), "127.0.0.1", 0,
                    zkServer.getConnectString(), 64L * MIB, new ChainLimits(1024, 64L << 20, 3_000, 100, 1 << 20)))) {
                EventLoopGroup loop = NettyTransport.group(1, "gathered-client");
                try {
                    StorageClient client = StorageClient.connect(loop, "127.0.0.1", server.port()).awaitConnected(10, TimeUnit.SECONDS);
                    for (int i = 0; i < 4; i++) {
                        long off = (long) i * MIB;
                        StorageResponse r = client.send(id -> new ReadRequest(id, CHAIN, CHUNK, off, MIB)).get(20, TimeUnit.SECONDS);
                        assertEquals(Status.OK, r.status(), r.message());
                        byte[] got = new byte[MIB];
                        r.data().getBytes(r.data().readerIndex(), got);
                        r.data().release();
                        byte[] want = new byte[MIB];
                        System.arraycopy(image, (int) off, want, 0, MIB);
                        assertArrayEquals(want, got, "MiB " + i);
                    }
                    client.close();
                } finally {
                    loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
                }
            }
        }
    }
}
