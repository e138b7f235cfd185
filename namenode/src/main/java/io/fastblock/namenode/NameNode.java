package io.fastblock.namenode;

import io.fastblock.protocol.config.CommandLine;
import io.fastblock.namenode.api.HttpApi;
import io.fastblock.namenode.api.NameNodeApi;
import io.fastblock.namenode.api.Router;
import io.fastblock.namenode.meta.ChunkMapStore;
import io.fastblock.namenode.meta.DownStore;
import io.fastblock.namenode.meta.GroupStore;
import io.fastblock.namenode.meta.NodeStore;
import io.fastblock.namenode.meta.VolumeEdits;
import io.fastblock.namenode.layers.StorageFences;
import io.fastblock.namenode.meta.LayerStacks;
import io.fastblock.namenode.meta.VolumeStore;
import io.fastblock.namenode.meta.ZkSchema;
import io.fastblock.namenode.placement.ChunkPlacement;
import io.fastblock.namenode.api.LeaderView;
import io.fastblock.namenode.ha.Leadership;
import io.fastblock.namenode.ha.TlsContexts;
import io.fastblock.namenode.fencing.LeaseFencing;
import io.fastblock.namenode.meta.ExportStore;
import io.fastblock.namenode.meta.FenceStore;
import io.fastblock.namenode.meta.LeaseStore;
import io.fastblock.namenode.meta.ProgressStore;
import io.fastblock.namenode.meta.TenantStore;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.SSLContext;
import io.fastblock.namenode.zookeeper.EmbeddedZooKeeper;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The metadata service. {@link #start} brings it up (embedded ZooKeeper if no --zk, Curator client,
 * group formation, REST API) and returns a running instance; {@link #close} stops it in reverse order:
 * HTTP first so no request sees a half-closed store, then Curator, then the embedded ZooKeeper.
 */
public final class NameNode implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(NameNode.class);
    private static final int SESSION_TIMEOUT_MS = 6_000; // a crashed leader is replaced within about this long
    private static final int CONNECT_TIMEOUT_MS = 10_000;
    private static final int CONNECT_WAIT_S = 30;
    /** How long a storage server may take to confirm a FENCE (it waits for the writes it admitted). */
    /** Covers a crashed predecessor's latch node expiring (the ZooKeeper session timeout) and then some. */
    private static final int ELECTION_WAIT_S = 30;

    private final NameNodeConfig config;
    private final EmbeddedZooKeeper embeddedZk;
    private final String zkConnect;
    private final CuratorFramework curator;
    private final Leadership leadership;
    private final HttpApi api;
    private final String url;
    private final CountDownLatch closed = new CountDownLatch(1);
    private boolean closing;

    private NameNode(NameNodeConfig config, EmbeddedZooKeeper embeddedZk, String zkConnect, CuratorFramework curator,
                     Leadership leadership, HttpApi api, String url) {
        this.config = config;
        this.embeddedZk = embeddedZk;
        this.zkConnect = zkConnect;
        this.curator = curator;
        this.leadership = leadership;
        this.api = api;
        this.url = url;
    }

    public static NameNode start(NameNodeConfig config) throws IOException, InterruptedException {
        // Whatever started successfully is closed again if a later step fails.
        Deque<AutoCloseable> started = new ArrayDeque<>();
        try {
            EmbeddedZooKeeper zk = null;
            String connect = config.zkConnect();
            if (config.embeddedZooKeeper()) {
                zk = EmbeddedZooKeeper.start(config.dataDir().resolve("zookeeper"), "127.0.0.1", config.zkPort());
                started.push(zk);
                connect = zk.connectString();
            }
            CuratorFramework curator = CuratorFrameworkFactory.newClient(connect, SESSION_TIMEOUT_MS,
                    CONNECT_TIMEOUT_MS, new ExponentialBackoffRetry(200, 10, 5_000));
            // Curator's own state messages are INFO and kept quiet (quietZooKeeperLogs): this line is
            // what an operator reading the log has to date a metadata outage.
            curator.getConnectionStateListenable().addListener((client, state) -> {
                if (state.isConnected()) {
                    LOG.info("ZooKeeper connection {}", state);
                } else {
                    LOG.warn("ZooKeeper connection {}", state);
                }
            });
            curator.start();
            started.push(curator);
            if (!curator.blockUntilConnected(CONNECT_WAIT_S, TimeUnit.SECONDS)) {
                throw new IOException("could not connect to ZooKeeper at " + connect + " within " + CONNECT_WAIT_S + " s");
            }
            ZkSchema.ensure(curator);

            VolumeStore volumes = new VolumeStore(curator);
            ChunkMapStore chunkMaps = new ChunkMapStore(curator);
            GroupStore groups = new GroupStore(curator);
            NodeStore nodes = new NodeStore(curator);
            AtomicReference<Leadership> elected = new AtomicReference<>();
            LeaderView leaderView = new LeaderView() {
                @Override
                public boolean isLeader() {
                    Leadership l = elected.get();
                    return l != null && l.isLeader();
                }

                @Override
                public Optional<String> leaderUrl() {
                    Leadership l = elected.get();
                    return l == null ? Optional.empty() : l.leaderUrl();
                }
            };
            ChunkPlacement placement = new ChunkPlacement(groups, nodes, volumes, chunkMaps);
            StorageFences fences = new StorageFences(nodes, config.fenceTimeout());
            started.push(fences);
            LeaseFencing fencing = new LeaseFencing(new FenceStore(curator), fences);
            NameNodeApi.Services services = new NameNodeApi.Services(volumes, chunkMaps, groups, nodes,
                    new ExportStore(curator), new LeaseStore(curator), new TenantStore(curator),
                    new ProgressStore(curator), placement, leaderView, new VolumeEdits(curator), fencing,
                    new DownStore(curator));
            Router router = new NameNodeApi(services, new NameNodeApi.Settings(config.chunkSize(),
                    config.oversubscription(), config.leaseTtl(), System::currentTimeMillis, config.replaceAfter()),
                    new LayerStacks(curator), fences).router();
            SSLContext tls = config.tls()
                    ? TlsContexts.server(Path.of(config.tlsKeystore()), config.tlsPassword().toCharArray()) : null;
            HttpApi api = HttpApi.start(config.listenHost(), config.httpPort(), router, config.apiToken(), tls,
                    leaderView);
            started.push(api);
            String myUrl = config.advertiseUrl().isEmpty()
                    ? (tls == null ? "http" : "https") + "://" + config.listenHost() + ":" + api.port()
                    : config.advertiseUrl();
            Leadership leadership = new Leadership(curator, myUrl, () -> {
                placement.forgetCounts(); // another leader may have allocated meanwhile: learn them afresh
                return LeaderServices.start(curator, groups, nodes, config, fences);
            });
            elected.set(leadership);
            started.push(leadership);
            leadership.start();
            awaitElection(leadership);
            LOG.info("namenode serving on {} (ZooKeeper {})", myUrl, connect);
            return new NameNode(config, zk, connect, curator, leadership, api, myUrl);
        } catch (Exception e) {
            while (!started.isEmpty()) {
                closeQuietly(started.pop());
            }
            if (e instanceof IOException io) {
                throw io;
            }
            if (e instanceof InterruptedException ie) {
                throw ie;
            }
            if (e instanceof RuntimeException re) {
                throw re;
            }
            throw new IOException(e);
        }
    }
    /**
     * Waits (bounded) until some namenode leads, so a lone namenode serves writes as soon as it says
     * READY. A standby whose leader is elsewhere returns at once.
     */
    private static void awaitElection(Leadership leadership) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(ELECTION_WAIT_S);
        while (leadership.leaderUrl().isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        if (leadership.leaderUrl().isEmpty()) {
            LOG.warn("no namenode leader elected within {} s; writes answer 503 NOT_LEADER until one is", ELECTION_WAIT_S);
        }
    }

    public int httpPort() {
        return api.port();
    }

    /** The URL this namenode advertises (and redirects to when it leads). */
    public String baseUrl() {
        return url;
    }

    public boolean isLeader() {
        return leadership.isLeader();
    }

    public Leadership leadership() {
        return leadership;
    }

    /** The embedded ZooKeeper's client port, or -1 when an external ZooKeeper is used. */
    public int zkPort() {
        return embeddedZk == null ? -1 : embeddedZk.port();
    }

    public String zkConnect() {
        return zkConnect;
    }

    public Router router() {
        return api.router();
    }

    /** Waits until {@link #close} has finished. */
    public void awaitClosed() throws InterruptedException {
        closed.await();
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closing) {
                return;
            }
            closing = true;
        }
        closeQuietly(leadership);
        closeQuietly(api);
        closeQuietly(curator);
        if (embeddedZk != null) {
            closeQuietly(embeddedZk);
        }
        LOG.info("namenode stopped");
        closed.countDown();
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            LOG.warn("closing {}: {}", c.getClass().getSimpleName(), e.toString());
        }
    }

    public static void main(String[] args) {
        quietZooKeeperLogs();
        NameNodeConfig config;
        if (CommandLine.wantsHelp(args)) {
            System.out.print(NameNodeConfig.usage());
            return;
        }
        try {
            config = NameNodeConfig.fromArgs(args);
        } catch (IllegalArgumentException e) {
            System.err.println("namenode: " + e.getMessage());
            System.exit(2);
            return;
        }
        NameNode node;
        try {
            node = start(config);
        } catch (Exception | LinkageError e) {
            // a missing class at start must end the process, not leave ZooKeeper's threads running
            System.err.println("namenode: could not start: " + e.getMessage());
            LOG.error("start failed", e);
            System.exit(1);
            return;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(node::close, "namenode-shutdown"));
        System.out.println("READY namenode " + node.baseUrl());
        System.out.flush();
        try {
            node.awaitClosed();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** ZooKeeper and Curator log every session event at INFO; keep them to warnings unless told otherwise. */
    private static void quietZooKeeperLogs() {
        for (String logger : new String[] {"org.apache.zookeeper", "org.apache.curator"}) {
            String key = "org.slf4j.simpleLogger.log." + logger;
            if (System.getProperty(key) == null) {
                System.setProperty(key, "warn");
            }
        }
    }
}
