package io.fastblock.storage.integrity;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.ReadRequest;
import io.fastblock.protocol.Status;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.WriteRequest;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.ZkPaths;
import io.fastblock.storage.StorageServer;
import io.fastblock.storage.StorageServerConfig;
import io.fastblock.storage.io.FaultInjectingFileIo;
import io.fastblock.storage.net.NettyTransport;
import io.fastblock.storage.net.StorageClient;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoopGroup;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;

/**
 * Three real storage servers in this process (real ZooKeeper, real sockets, real files), each
 * on its own fault-injecting disk, chained a -> b -> c as group 1.
 */
final class ThreeNodeChain implements AutoCloseable {
    static final int GROUP = 1;
    static final ChainAddress CHAIN = new ChainAddress(GROUP, 1, 1);
    static final List<String> IDS = List.of("a", "b", "c");

    private final Path dir;
    final TestingServer zkServer;
    final CuratorFramework zk;
    final Map<String, FaultInjectingFileIo.Factory> disks = new HashMap<>();
    final Map<String, StorageServer> servers = new HashMap<>();
    final EventLoopGroup loop = NettyTransport.group(1, "test-client");
    private final Map<String, StorageClient> clients = new HashMap<>();

    private final io.fastblock.storage.BackgroundRates background;
    final io.fastblock.storage.chain.TailLayout layout;

    ThreeNodeChain(Path dir, long seed) throws Exception {
        this(dir, seed, io.fastblock.storage.BackgroundRates.DEFAULTS);
    }

    ThreeNodeChain(Path dir, long seed, io.fastblock.storage.BackgroundRates background) throws Exception {
        this(dir, seed, background, StorageServerConfig.DEFAULT_TAIL_LAYOUT);
    }

    ThreeNodeChain(Path dir, long seed, io.fastblock.storage.chain.TailLayout layout) throws Exception {
        this(dir, seed, io.fastblock.storage.BackgroundRates.DEFAULTS, layout);
    }

    ThreeNodeChain(Path dir, long seed, io.fastblock.storage.BackgroundRates background,
                   io.fastblock.storage.chain.TailLayout layout) throws Exception {
        this.dir = dir;
        this.background = background;
        this.layout = layout;
        zkServer = new TestingServer(true);
        zk = CuratorFrameworkFactory.newClient(zkServer.getConnectString(), new RetryOneTime(100));
        zk.start();
        zk.create().creatingParentsIfNeeded().forPath(ZkPaths.group(GROUP), MetaJson.write(new GroupRecord(GROUP, 1, IDS)));
        for (String id : IDS) {
            disks.put(id, new FaultInjectingFileIo.Factory(seed + id.hashCode()));
            start(id);
        }
    }

    void start(String id) throws Exception {
        servers.put(id, StorageServer.start(new StorageServerConfig(id, dir.resolve(id), "127.0.0.1", 0,
                zkServer.getConnectString(), 1 << 20, io.fastblock.storage.chain.ChainLimits.DEFAULTS, layout)
                .withBackground(background), disks.get(id)));
        StorageClient old = clients.remove(id);
        if (old != null) {
            old.close();
        }
    }

    StorageServer server(String id) {
        return servers.get(id);
    }

    synchronized StorageClient client(String id) throws Exception {
        StorageClient c = clients.get(id);
        if (c == null || !c.isOpen()) {
            c = StorageClient.connect(loop, "127.0.0.1", servers.get(id).port()).awaitConnected(10, TimeUnit.SECONDS);
            clients.put(id, c);
        }
        return c;
    }

    /** The machine loses power (unforced data dropped, last write torn), then the node restarts on the same files. */
    String powerLossAndRestart(String id) throws Exception {
        String dropped = disks.get(id).powerLoss(FaultInjectingFileIo.Tear.LAST_WRITE);
        servers.remove(id).close();
        disks.get(id).powerOn();
        start(id);
        return dropped;
    }

    /** The node's disk already lost power (an armed power loss struck): stop it, power on, restart on the same files. */
    void restartAfterPowerLoss(String id) throws Exception {
        servers.remove(id).close();
        disks.get(id).powerOn();
        start(id);
    }

    StorageResponse write(ChunkId chunk, long offset, byte[] data) throws Exception {
        return client("a").send(rid -> new WriteRequest(rid, 0, CHAIN, chunk, offset, 0, Unpooled.wrappedBuffer(data)))
                .get(30, TimeUnit.SECONDS);
    }

    StorageResponse trim(ChunkId chunk, long offset, int length) throws Exception {
        return client("a").send(rid -> WriteRequest.trim(rid, CHAIN, chunk, offset, length)).get(30, TimeUnit.SECONDS);
    }

    io.fastblock.protocol.Extents extents(String id, ChunkId chunk, long offset, int length) throws Exception {
        StorageResponse r = client(id).send(rid -> new io.fastblock.protocol.ExtentsRequest(rid, CHAIN, chunk, offset, length))
                .get(30, TimeUnit.SECONDS);
        try {
            assertEquals(Status.OK, r.status(), "extents at " + id + ": " + r.message());
            return io.fastblock.protocol.Extents.decode(r.data());
        } finally {
            r.data().release();
        }
    }

    byte[] read(String id, ChunkId chunk, long offset, int length) throws Exception {
        StorageResponse r = client(id).send(rid -> new ReadRequest(rid, CHAIN, chunk, offset, length)).get(30, TimeUnit.SECONDS);
        try {
            assertEquals(Status.OK, r.status(), "read at " + id + ": " + r.message());
            byte[] out = new byte[r.data().readableBytes()];
            r.data().getBytes(r.data().readerIndex(), out);
            return out;
        } finally {
            r.data().release();
        }
    }

    @Override
    public void close() throws Exception {
        List<Exception> errors = new ArrayList<>();
        clients.values().forEach(StorageClient::close);
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        servers.values().forEach(StorageServer::close);
        zk.close();
        zkServer.close();
        if (!errors.isEmpty()) {
            throw errors.get(0);
        }
    }
}
