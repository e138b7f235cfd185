package io.fastblock.storage;

import io.fastblock.protocol.config.CommandLine;
import io.fastblock.protocol.codec.StorageFrameDecoder;
import io.fastblock.protocol.codec.StorageFrameEncoder;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.NodeRecord;
import io.fastblock.protocol.meta.ZkPaths;
import io.fastblock.storage.chain.ChainForwarder;
import io.fastblock.storage.chain.ChainMetrics;
import io.fastblock.storage.chain.GroupChunks;
import io.fastblock.storage.chain.ReplicaStorage;
import io.fastblock.storage.chain.GroupDirectory;
import io.fastblock.storage.chain.NodeDirectory;
import io.fastblock.storage.chain.ReplicaService;
import io.fastblock.storage.chunk.ChunkStore;
import io.fastblock.storage.integrity.NodeIntegrity;
import io.fastblock.storage.io.FileIoFactory;
import io.fastblock.storage.io.FileSystemSpace;
import io.fastblock.storage.log.ChunkStoreBase;
import io.fastblock.storage.log.LogCleaner;
import io.fastblock.storage.log.LogStore;
import io.fastblock.storage.net.InflightRequests;
import io.fastblock.storage.net.NettyTransport;
import io.fastblock.storage.net.StorageRequestHandler;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.nodes.PersistentNode;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A data node. {@link #start} opens the stores (replaying the log), serves the storage protocol
 * and registers the node in ZooKeeper; {@link #close} stops accepting, lets in-flight requests
 * finish and closes everything.
 */
public final class StorageServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(StorageServer.class);

    private final StorageServerConfig config;
    private final String nodeId;
    private final StorageMetrics metrics = new StorageMetrics();
    private final InflightRequests inflight = new InflightRequests();
    private final ChannelGroup connections = new DefaultChannelGroup("storage-connections", GlobalEventExecutor.INSTANCE);
    private final FileIoFactory files;
    private ChunkStore chunks;
    private NodeIntegrity integrity;
    private LogStore log;
    private LogCleaner cleaner;
    private io.fastblock.storage.log.LogScrubber logScrubber;
    /** One budget for every copy this node makes (catch-up and resync): --copy-rate. */
    private io.fastblock.storage.io.ByteRateLimiter copyLimiter;
    private CuratorFramework zk;
    private io.fastblock.storage.chain.FenceDirectory fences;
    private ExecutorService zkReads;
    private GroupDirectory groups;
    private NodeDirectory nodes;
    private EventLoopGroup boss;
    private EventLoopGroup workers;
    private ChainForwarder forwarder;
    private ReplicaService service;
    private GroupChunks groupChunks;
    private ExecutorService chainBlocking;
    private final ChainMetrics chainMetrics = new ChainMetrics(metrics.registry());
    private Channel serverChannel;
    private PersistentNode liveNode;
    private LoadReporter load;
    private int port;
    private boolean closed;
    private final java.util.concurrent.CountDownLatch stopped = new java.util.concurrent.CountDownLatch(1);

    private StorageServer(StorageServerConfig config, String nodeId, FileIoFactory files) {
        this.files = files;
        this.config = config;
        this.nodeId = nodeId;
    }

    public static StorageServer start(StorageServerConfig config) throws Exception {
        return start(config, FileIoFactory.real());
    }

    /** Starts a server whose chunk files go through {@code files} (power-loss tests pass a fault-injecting factory). */
    public static StorageServer start(StorageServerConfig config, FileIoFactory files) throws Exception {
        String id = NodeIdentity.resolve(config.dataDir(), config.nodeId());
        StorageServer s = new StorageServer(config, id, files);
        try {
            s.startUp();
        } catch (Exception | Error e) {
            s.close();
            throw e;
        }
        return s;
    }

    private void startUp() throws Exception {
        chunks = new ChunkStore(config.dataDir(), config.ioThreads(), files, config.checkpointInterval(),
                config.mappedChunks());
        metrics.bindMappedChunks(chunks.mappings());
        // The tail reads its log over the in-place chunk files and folds into them when it stops being tail.
        log = LogStore.open(config.dataDir(), config.segmentSize(), metrics, new ChunkStoreBase(chunks), 0,
                config.logDirectIo() ? files : FileIoFactory.withoutDirectWrites(files));
        cleaner = new LogCleaner(log, config.cleanerSettings()).start();

        zk = CuratorFrameworkFactory.builder().connectString(config.zk()).sessionTimeoutMs(config.zkSessionTimeoutMs())
                .connectionTimeoutMs(10_000).retryPolicy(new ExponentialBackoffRetry(200, 10)).build();
        zk.start();
        if (!zk.blockUntilConnected(30, TimeUnit.SECONDS)) {
            throw new IOException("cannot connect to ZooKeeper at " + config.zk());
        }
        zkReads = Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "zk-read");
            t.setDaemon(true);
            return t;
        });
        groups = new GroupDirectory(zk, zkReads).start();
        nodes = new NodeDirectory(zk, zkReads).start();

        boss = NettyTransport.group(1, "storage-accept");
        workers = NettyTransport.group(config.networkThreads(), "storage-io");
        forwarder = new ChainForwarder(nodeId, nodes, workers, config.chain().ackTimeoutMillis());
        groupChunks = new GroupChunks(config.dataDir());
        chainBlocking = Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "chain-blocking");
            t.setDaemon(true);
            return t;
        });
        copyLimiter = new io.fastblock.storage.io.ByteRateLimiter(config.background().copyBytesPerSecond());
        // Rewriting chunk files sparse after small trims is background copying like re-replication.
        chunks.compactionPacedBy(copyLimiter);
        ReplicaStorage storage = new ReplicaStorage(chunks, log, chainBlocking, config.tailLayout());
        integrity = new NodeIntegrity(nodeId, chunks, groups, nodes, groupChunks::groupOf,
                ownLog(), workers,
                metrics.registry(), new NodeIntegrity.Settings(config.background().scrubBytesPerSecond(),
                        java.time.Duration.ofMillis(config.background().scrubPauseMillis()), config.background().scrub(),
                        NodeIntegrity.Settings.DEFAULTS.resyncRetryMillis())).withCopyLimiter(copyLimiter);
        storage.withRepairingReads(integrity.readRepair(), groups).withResync(integrity::resync);
        io.fastblock.storage.net.ClientChannels clients = new io.fastblock.storage.net.ClientChannels();
        service = new ReplicaService(nodeId, groups, forwarder, storage, groupChunks,
                metrics, chainMetrics, config.chain(), chainBlocking, copyLimiter, clients);
        integrity.readRepair().tailWritesInPlace(config.tailLayout() == io.fastblock.storage.chain.TailLayout.LOG_AND_IN_PLACE)
                .leaseEpochs(service.fences()::floor);
        // Recorded fences are in force before the first request is served.
        fences = new io.fastblock.storage.chain.FenceDirectory(zk, service.fences());
        int loadedFences = fences.start();
        if (loadedFences > 0) {
            LOG.info("storage node {}: {} recorded volume fence(s) loaded", nodeId, loadedFences);
        }
        ReplicaService served = service;
        ServerBootstrap b = new ServerBootstrap().group(boss, workers).channel(NettyTransport.serverChannel(boss))
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        connections.add(ch);
                        // Answers completed together (a group commit's batch) leave in one send, not one each.
                        // A large write's data stays in the socket read buffers it arrived in (gathered, not
                        // copied into one buffer): the chunk file, the log and the forward to the next
                        // replica all take it as a list of buffers.
                        ch.pipeline().addLast(new FlushConsolidationHandler(io.fastblock.storage.net.StorageClient.FLUSH_AFTER, true),
                                StorageFrameDecoder.gathering(),
                                StorageFrameEncoder.INSTANCE, new StorageRequestHandler(served, inflight, clients));
                    }
                });
        serverChannel = b.bind(config.listen(), config.port()).sync().channel();
        port = ((InetSocketAddress) serverChannel.localAddress()).getPort();

        register();
        load = new LoadReporter(zk, nodeId, files.space(config.dataDir()), inflight, config.heartbeatMillis());
        integrity.start();
        if (config.background().logScrub()) {
            // Bad log records are fetched from a replica and written again in place of the bad run (it becomes dead).
            logScrubber = new io.fastblock.storage.log.LogScrubber(log,
                    new io.fastblock.storage.io.ByteRateLimiter(config.background().logScrubBytesPerSecond()),
                    integrity.logRepair(log::rewrite)).start(config.background().logScrubPauseMillis());
        }
        LOG.info("storage node {} serving on {}:{} ({} transport)", nodeId, config.listen(), port,
                workers.getClass().getSimpleName());
    }

    /** This node's log as the resync source of chunks of groups it is tail of: bytes and allocation. */
    private io.fastblock.storage.integrity.ChunkResync.LocalLog ownLog() {
        LogStore own = log;
        return new io.fastblock.storage.integrity.ChunkResync.LocalLog() {
            @Override
            public java.util.concurrent.CompletableFuture<io.netty.buffer.ByteBuf> read(io.fastblock.protocol.ChunkId chunk,
                                                                                     long offset, int length) {
                return own.readAsync(chunk, offset, length, io.netty.buffer.PooledByteBufAllocator.DEFAULT);
            }

            @Override
            public java.util.concurrent.CompletableFuture<io.fastblock.protocol.Extents> extents(
                    io.fastblock.protocol.ChunkId chunk, long offset, int length) {
                return java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                    try {
                        return own.extents(chunk, offset, length);
                    } catch (IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                }, chainBlocking);
            }
        };
    }

    private void register() throws Exception {
        FileSystemSpace disk = files.space(config.dataDir());
        NodeRecord record = new NodeRecord(nodeId, config.listen(), port, disk.total(), disk.usable(),
                config.labels());
        byte[] json = MetaJson.write(record);
        String path = ZkPaths.node(nodeId);
        try {
            zk.create().creatingParentsIfNeeded().forPath(path, json);
        } catch (KeeperException.NodeExistsException e) {
            zk.setData().forPath(path, json);
        }
        // Re-created by Curator after a session loss, so liveness follows this process.
        liveNode = new PersistentNode(zk, CreateMode.EPHEMERAL, false, ZkPaths.live(nodeId), json);
        liveNode.start();
        if (!liveNode.waitForInitialCreate(30, TimeUnit.SECONDS)) {
            throw new IOException("could not create " + ZkPaths.live(nodeId) + " in ZooKeeper");
        }
    }

    public String nodeId() {
        return nodeId;
    }

    public int port() {
        return port;
    }

    /**
     * Requests taken from the open connections and not answered yet (each connection stops reading
     * at its bound). Each count is read on its connection's loop, which alone writes it; so not
     * from one of this server's loops.
     */
    public int unansweredRequests() {
        int n = 0;
        for (Channel c : connections) {
            StorageRequestHandler h = c.pipeline().get(StorageRequestHandler.class);
            if (h != null) {
                n += c.eventLoop().submit(h::outstanding).syncUninterruptibly().getNow();
            }
        }
        return n;
    }

    /** How the READY line names this server: node id, then where it listens. */
    public String endpoint() {
        return nodeId + " " + config.listen() + ":" + port;
    }

    public String host() {
        return config.listen();
    }

    public NodeIntegrity integrity() {
        return integrity;
    }

    public ChunkStore chunkStore() {
        return chunks;
    }

    public StorageMetrics metrics() {
        return metrics;
    }

    public LogStore logStore() {
        return log;
    }

    public ChainMetrics chainMetrics() {
        return chainMetrics;
    }

    /** The log scrubber, or null when --log-scrub-rate is 0. */
    public io.fastblock.storage.log.LogScrubber logScrubber() {
        return logScrubber;
    }

    public ReplicaService replicas() {
        return service;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (liveNode != null) {
            // Deleting the ephemeral node tells the namenode at once; but with ZooKeeper out of reach
            // (Ctrl-C stops the namenode, which runs it, at the same moment) Curator would retry for
            // many seconds before the data path is closed, and the launcher kills what outlasts its
            // grace period. Ending the session below removes the node anyway, or its expiry does.
            closeEphemeral("live node", liveNode::close);
        }
        if (load != null) {
            closeEphemeral("load reporter", load::close); // an ephemeral node too
        }
        if (serverChannel != null) {
            serverChannel.close().syncUninterruptibly();
        }
        // Stop reading new requests, let the ones already taken finish (their writes reach the log).
        for (Channel c : connections) {
            c.config().setAutoRead(false);
        }
        try {
            if (!inflight.awaitIdle(15_000)) {
                LOG.warn("{} requests still in flight at shutdown", inflight.count());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        connections.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        if (logScrubber != null) {
            quietly(logScrubber::close);
        }
        if (integrity != null) {
            quietly(integrity::close);
        }
        if (service != null) {
            quietly(service::close);
        }
        if (forwarder != null) {
            quietly(forwarder::close);
        }
        if (workers != null) {
            workers.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        }
        if (boss != null) {
            boss.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        }
        if (fences != null) {
            quietly(fences::close);
        }
        if (groups != null) {
            quietly(groups::close);
        }
        if (nodes != null) {
            quietly(nodes::close);
        }
        if (zk != null) {
            quietly(zk::close);
        }
        if (zkReads != null) {
            zkReads.shutdownNow();
        }
        if (chainBlocking != null) {
            chainBlocking.shutdown();
        }
        if (groupChunks != null) {
            quietly(groupChunks::close);
        }
        if (cleaner != null) {
            quietly(cleaner::close);
        }
        if (log != null) {
            quietly(log::close);
        }
        if (chunks != null) {
            quietly(chunks::close);
        }
        LOG.info("storage node {} stopped", nodeId);
        stopped.countDown();
    }

    /** Blocks until {@link #close} has finished (all server threads are daemons, so main must wait). */
    public void awaitClosed() throws InterruptedException {
        stopped.await();
    }

    private interface Step {
        void run() throws Exception;
    }

    private static final long EPHEMERAL_CLOSE_MILLIS = 2_000;

    /**
     * Closes what owns an ephemeral node: not at all while ZooKeeper is disconnected (the node goes
     * with the session), and for at most {@link #EPHEMERAL_CLOSE_MILLIS} otherwise.
     */
    private void closeEphemeral(String what, Step step) {
        if (zk == null || !zk.getZookeeperClient().isConnected()) {
            LOG.info("node {}: ZooKeeper is not connected; the {} goes with the session", nodeId, what);
            return;
        }
        boundedly(what, step, EPHEMERAL_CLOSE_MILLIS);
    }

    /** {@link #quietly}, but goes on after {@code millis}; the step finishes (or fails) in the background. */
    private static void boundedly(String what, Step step, long millis) {
        Thread t = new Thread(() -> quietly(step), "storage-shutdown-" + what.replace(' ', '-'));
        t.setDaemon(true);
        t.start();
        try {
            t.join(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (t.isAlive()) {
            LOG.warn("closing the {} did not finish within {} ms (ZooKeeper out of reach?); going on", what, millis);
        }
    }

    private static void quietly(Step step) {
        try {
            step.run();
        } catch (Exception e) {
            LOG.warn("shutdown step failed: {}", e.toString());
        }
    }

    public static void main(String[] args) {
        io.fastblock.protocol.codec.BufferPoolDefaults.serverDefault(); // before any pooled buffer
        io.fastblock.protocol.codec.BufferLeakDetection.serverDefault();
        if (CommandLine.wantsHelp(args)) {
            System.out.print(StorageServerConfig.usage("storage-server [--name=value ...]"));
            return;
        }
        io.fastblock.protocol.codec.BufferPoolDefaults.zeroedChunksWarning().ifPresent(LOG::warn);
        StorageServerConfig config;
        try {
            config = StorageServerConfig.fromArgs(args);
        } catch (IllegalArgumentException e) {
            System.err.println("storage-server: " + e.getMessage());
            System.exit(2);
            return;
        }
        StorageServer server;
        try {
            server = start(config);
        } catch (IllegalStateException e) {
            System.err.println("storage-server: " + e.getMessage());
            System.exit(1);
            return;
        } catch (Exception e) {
            System.err.println("storage-server: cannot start: " + e);
            e.printStackTrace();
            System.exit(1);
            return;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(server::close, "storage-shutdown"));
        System.out.println("READY storage " + server.endpoint());
        System.out.flush();
        try {
            server.awaitClosed();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
