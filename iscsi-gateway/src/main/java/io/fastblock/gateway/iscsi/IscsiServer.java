package io.fastblock.gateway.iscsi;

import io.fastblock.gateway.GatewayConfig;
import io.fastblock.gateway.client.AnswerSpin;
import io.fastblock.gateway.iscsi.login.SessionParams;
import io.fastblock.gateway.iscsi.login.SessionRegistry;
import io.fastblock.gateway.iscsi.pdu.IscsiPduDecoder;
import io.fastblock.gateway.iscsi.pdu.IscsiPduEncoder;
import io.fastblock.gateway.iscsi.session.DataBudget;
import io.fastblock.gateway.iscsi.session.IscsiConnectionHandler;
import io.fastblock.gateway.iscsi.session.LogicalUnits;
import io.fastblock.gateway.iscsi.session.Portal;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.ServerSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The iSCSI portal: accepts TCP connections on {@code listenHost:iscsiPort} and runs one
 * {@link IscsiConnectionHandler} per connection. Uses native epoll when available, else NIO,
 * with pooled direct buffers.
 */
public final class IscsiServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(IscsiServer.class);
    private final GatewayConfig config;
    private final TargetCatalog catalog;
    private final IscsiSettings settings;
    private Portal portal;
    private final SessionRegistry registry = new SessionRegistry();
    private final LogicalUnits units = new LogicalUnits();
    private final ChannelGroup connections = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
    private EventLoopGroup bossGroup;
    private EventLoopGroup workerGroup;
    private Channel serverChannel;
    private int port = -1;

    public IscsiServer(GatewayConfig config, TargetCatalog catalog) {
        this(config, catalog, IscsiSettings.DEFAULTS.withNop(config.timers().nopInterval(), config.timers().nopTimeout()));
    }

    public IscsiServer(GatewayConfig config, TargetCatalog catalog, IscsiSettings settings) {
        this.config = config;
        this.catalog = catalog;
        this.settings = settings;
    }

    /** Binds the portal; returns once it accepts connections. */
    public synchronized IscsiServer start() throws InterruptedException {
        if (serverChannel != null) {
            throw new IllegalStateException("already started");
        }
        boolean epoll = Epoll.isAvailable();
        bossGroup = epoll ? new EpollEventLoopGroup(1) : new NioEventLoopGroup(1);
        // The workers wait for low-queue-depth storage answers by polling briefly (see AnswerSpin).
        workerGroup = epoll ? new EpollEventLoopGroup(0, AnswerSpin.factory(config.timers().answerSpin().toNanos(),
                AnswerSpin.DEFAULT_MAX_AWAITED)) : new NioEventLoopGroup();
        Class<? extends ServerSocketChannel> channelClass = epoll ? EpollServerSocketChannel.class
                : NioServerSocketChannel.class;
        String[] address = new String[1];
        portal = new Portal(catalog, registry, units, () -> address[0], config.queueDepth(), settings,
                new DataBudget(config.dataMemory()));
        ServerBootstrap b = new ServerBootstrap()
                .group(bossGroup, workerGroup)
                .channel(channelClass)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.SO_KEEPALIVE, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        connections.add(ch);
                        ch.pipeline().addLast("decoder",
                                new IscsiPduDecoder(SessionParams.OUR_MAX_RECV_DATA_SEGMENT_LENGTH));
                        ch.pipeline().addLast("encoder", new IscsiPduEncoder());
                        ch.pipeline().addLast("iscsi", new IscsiConnectionHandler(portal));
                    }
                });
        serverChannel = b.bind(config.listenHost(), config.iscsiPort()).sync().channel();
        port = ((InetSocketAddress) serverChannel.localAddress()).getPort();
        address[0] = advertisedPortal(config.portalAddress(), config.listenHost(), port);
        return this;
    }

    /** The configured portal address, with the real port when the configuration asked for an ephemeral one. */
    static String advertisedPortal(String configured, String host, int boundPort) {
        if (configured == null || configured.isEmpty()) {
            return host + ":" + boundPort;
        }
        if (configured.endsWith(":0")) {
            return configured.substring(0, configured.length() - 2) + ":" + boundPort;
        }
        return configured;
    }

    /**
     * The event loops the connections run on (null before {@link #start}). The FAST client's
     * storage connections attach to them so a command's storage requests and answers stay on its
     * connection's loop ({@link io.fastblock.gateway.client.StorageClient#attachTo}).
     */
    public synchronized EventLoopGroup eventLoops() {
        return workerGroup;
    }

    /** The bound TCP port (useful when configured with port 0). */
    public synchronized int port() {
        if (port < 0) {
            throw new IllegalStateException("not started");
        }
        return port;
    }

    /** Sessions currently logged in (normal and discovery). */
    public int sessionCount() {
        return registry.size();
    }

    /** The command data all sessions hold, against {@code --data-memory} (null before {@link #start}). */
    public synchronized DataBudget dataBudget() {
        return portal == null ? null : portal.dataBudget();
    }

    /** PDUs received (decoded) on all connections since start. */
    public long pdusReceived() {
        return portal.pdusReceived();
    }

    /** The live sessions by TSIH, for diagnostics. */
    public String sessions() {
        return registry.toString();
    }

    /** Sessions that negotiated CRC32C header digests since start. */
    public int headerDigestSessions() {
        return portal.headerDigestSessions();
    }

    /** Targets with an open device. */
    public int openDeviceCount() {
        return units.openCount();
    }

    /**
     * Stops accepting, asks every logged-in initiator to log out (Async Message event 1) and waits
     * up to {@link IscsiSettings#logoutGrace()} for them to do so, then closes what is left and the
     * event loops.
     */
    @Override
    public synchronized void close() {
        if (serverChannel == null) {
            return;
        }
        serverChannel.close().syncUninterruptibly();
        List<CompletableFuture<Void>> leaving = new ArrayList<>();
        for (IscsiConnectionHandler c : portal.connections()) {
            if (c.inFullFeaturePhase()) {
                c.requestLogout("gateway shutting down");
                leaving.add(c.closed());
            }
        }
        try {
            CompletableFuture.allOf(leaving.toArray(CompletableFuture[]::new))
                    .get(settings.logoutGrace().toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            LOG.info("{} session(s) did not log out within {}; closing them", leaving.stream()
                    .filter(f -> !f.isDone()).count(), settings.logoutGrace());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            throw new IllegalStateException(e);
        }
        connections.close().syncUninterruptibly();
        bossGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        workerGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        serverChannel = null;
    }
}
