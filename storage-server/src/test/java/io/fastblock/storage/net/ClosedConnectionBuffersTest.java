package io.fastblock.storage.net;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoopGroup;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A client that sends large reads and closes its connection before the answers come back must not
 * leave the answers' buffers behind: a gateway whose connection breaks (or is closed by the server
 * for a malformed frame) under load did exactly that, and the server ran out of direct memory.
 */
class ClosedConnectionBuffersTest {
    private static final int MIB = 1 << 20;
    private static final ChainAddress CHAIN = new ChainAddress(1, 1, 1);

    @TempDir
    Path dir;

    @Test
    void answersToAClosedConnectionAreReleased() throws Exception {
        try (TestingServer zkServer = new TestingServer(true);
             CuratorFramework zk = CuratorFrameworkFactory.newClient(zkServer.getConnectString(), new RetryOneTime(100))) {
            zk.start();
            zk.create().creatingParentsIfNeeded().forPath(ZkPaths.group(1), MetaJson.write(new GroupRecord(1, 1, List.of("a"))));
            try (StorageServer server = StorageServer.start(new StorageServerConfig("a", dir.resolve("a"), "127.0.0.1", 0,
                    zkServer.getConnectString(), 64L * MIB, new ChainLimits(1024, 64L << 20, 3_000, 100, 1 << 20)))) {
                EventLoopGroup loop = NettyTransport.group(1, "leak-client");
                try {
                    StorageClient client = StorageClient.connect(loop, "127.0.0.1", server.port()).awaitConnected(10, TimeUnit.SECONDS);
                    StorageResponse w = client.send(id -> new WriteRequest(id, 0, CHAIN, new ChunkId(9, 0), 0, 0,
                            Unpooled.wrappedBuffer(new byte[4 * MIB]))).get(20, TimeUnit.SECONDS);
                    assertEquals(Status.OK, w.status(), w.message());
                    client.close();

                    long before = PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory();
                    int rounds = 30;
                    int readsPerRound = 32;
                    for (int round = 0; round < rounds; round++) {
                        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), server.port())) {
                            OutputStream out = s.getOutputStream();
                            for (int i = 0; i < readsPerRound; i++) {
                                long off = (long) (i % 4) * MIB;
                                ByteBuf frame = StorageFrames.encode(new ReadRequest(i + 1, CHAIN, new ChunkId(9, 0), off, MIB),
                                        ByteBufAllocator.DEFAULT);
                                byte[] bytes = new byte[frame.readableBytes()];
                                frame.readBytes(bytes);
                                frame.release();
                                out.write(bytes);
                            }
                            out.flush();
                        } // closed at once: most answers complete after the close
                    }
                    // Let the server finish (or drop) every read, then compare what the pool still holds.
                    long after = 0;
                    for (int i = 0; i < 50; i++) {
                        Thread.sleep(100);
                        after = PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory();
                    }
                    System.out.printf("pooled direct memory: %d MiB before, %d MiB after %d closed connections with %d 1 MiB reads each%n",
                            before / MIB, after / MIB, rounds, readsPerRound);
                    // Leaked answers would pin at least rounds x readsPerRound MiB (960 MiB); the pool's
                    // own caches and chunks account for a few tens.
                    assertTrue(after - before < 128L * MIB, "pooled direct memory grew by " + (after - before) / MIB + " MiB");
                } finally {
                    loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
                }
            }
        }
    }
}
