package io.fastblock.gateway.client;

import io.fastblock.protocol.AnswerToRequest;
import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.ExtentsRequest;
import io.fastblock.protocol.PingRequest;
import io.fastblock.protocol.ReadRequest;
import io.fastblock.protocol.StorageMessage;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.WriteRequest;
import io.fastblock.protocol.codec.StorageFrameDecoder;
import io.fastblock.protocol.codec.StorageFrameEncoder;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.ThreadExecutorMap;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gateway's connections to storage nodes, shared by all its volumes: lazily opened
 * connections per node address, request ids unique across the client, a timeout per request, and
 * all outstanding requests of a connection failed when it drops (the next request reconnects).
 * Futures complete on the connection's event loop: continuations must not block.
 *
 * <p>A request sent from one of the event loops given to {@link #attachTo} (the iSCSI portal's)
 * goes over a connection of its own that lives on that same loop: the request is written without
 * handing it to another thread and its answer completes on the loop that sends the Data-In, so a
 * read costs no thread switch in the gateway (two wake-ups of another thread each before, which
 * on a loaded machine each meant waiting for a CPU). Requests from any other thread use one
 * connection per node on the client's own loops.
 */
public final class StorageClient implements StorageTransport, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(StorageClient.class);

    /** The largest buffer one socket read of an answer stream goes into. */
    static final int READ_BUFFER_MAX = 1024 * 1024;
    private final EventLoopGroup group;
    private final Bootstrap bootstrap;
    private final long timeoutNanos;
    private final ConcurrentHashMap<Route, StorageConnection> connections = new ConcurrentHashMap<>();
    /** Event loops requests may come from and whose own connections they then use; see {@link #attachTo}. */
    private volatile Set<EventExecutor> attachable = Set.of();
    /** Per attached loop, its direct answers (see {@link #write(NodeAddress, NodeAddress, ChainAddress, ChunkId, long, ByteBuf)}). */
    private volatile Map<EventExecutor, DirectAnswers> loopAnswers = Map.of();
    private final boolean directAnswers;
    private final AtomicLong nextRequestId = new AtomicLong(1);
    private volatile boolean closed;

    public StorageClient(Duration requestTimeout, int ioThreads) {
        this(requestTimeout, ioThreads, !Boolean.getBoolean("fastblock.gateway.noDirectAnswers"));
    }

    /** {@code directAnswers}: let chain tails answer writes sent from the attached loops (see {@link #attachTo}). */
    public StorageClient(Duration requestTimeout, int ioThreads, boolean directAnswers) {
        this.directAnswers = directAnswers;
        if (requestTimeout.isNegative() || requestTimeout.isZero()) {
            throw new IllegalArgumentException("request timeout must be positive, got " + requestTimeout);
        }
        this.timeoutNanos = requestTimeout.toNanos();
        ThreadFactory threads = NamenodeClient.daemonThreads("storage-io");
        boolean epoll = Epoll.isAvailable();
        this.group = epoll ? new EpollEventLoopGroup(ioThreads, threads) : new NioEventLoopGroup(ioThreads, threads);
        this.bootstrap = new Bootstrap()
                .group(group)
                .channel(epoll ? EpollSocketChannel.class : NioSocketChannel.class)
                .option(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
                // Read answers are passed on as the buffers they were read into (see
                // StorageFrameDecoder.gathering), so those live until the Data-In is written: up to
                // 1 MiB per socket read makes a 1 MiB answer one or two buffers (the pool's thread
                // cache recycles them) instead of sixteen of 64 KiB, and one or two reads instead of sixteen.
                .option(ChannelOption.RCVBUF_ALLOCATOR, new AdaptiveRecvByteBufAllocator(64, 2048, READ_BUFFER_MAX))
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.SO_KEEPALIVE, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(2000, requestTimeout.toMillis()));
        LOG.debug("storage client using {} transport", epoll ? "epoll" : "nio");
    }

    public StorageClient(Duration requestTimeout) {
        this(requestTimeout, 2);
    }

    @Override
    public CompletableFuture<StorageResponse> write(NodeAddress node, ChainAddress chain, ChunkId chunk, long offset,
                                                    ByteBuf data) {
        return send(node, new WriteRequest(nextRequestId.getAndIncrement(), 0, chain, chunk, offset, 0, data));
    }

    /**
     * Sent from an attached loop, the write asks the chain's tail to answer this loop directly
     * (its OK then comes two hops sooner) once the loop's connection to {@code tail} has
     * registered the loop's client id there. The head still answers errors, and any OK the tail
     * could not deliver; if the tail's connection closes first, the write fails as a lost
     * connection and the caller resends it, as after any lost answer.
     */
    @Override
    public CompletableFuture<StorageResponse> write(NodeAddress node, NodeAddress tail, ChainAddress chain, ChunkId chunk,
                                                    long offset, ByteBuf data) {
        EventLoop loop = callerLoop();
        DirectAnswers answers = loop == null || closed ? null : loopAnswers.get(loop);
        if (answers == null) {
            return write(node, chain, chunk, offset, data);
        }
        long id = nextRequestId.getAndIncrement();
        WriteRequest w = new WriteRequest(id, 0, chain, chunk, offset, 0, data);
        StorageConnection tailConnection = connection(new Route(tail, loop));
        StorageConnection headConnection = connection(new Route(node, loop));
        if (tailConnection.registered()) {
            w = w.answeredDirectlyTo(answers.clientId, id);
            answers.expect(id, headConnection, tailConnection);
        }
        CompletableFuture<StorageResponse> result = new CompletableFuture<>();
        headConnection.send(w, result);
        return result;
    }

    @Override
    public CompletableFuture<StorageResponse> read(NodeAddress node, ChainAddress chain, ChunkId chunk, long offset,
                                                   int length) {
        return send(node, new ReadRequest(nextRequestId.getAndIncrement(), chain, chunk, offset, length));
    }

    @Override
    public CompletableFuture<StorageResponse> trim(NodeAddress node, ChainAddress chain, ChunkId chunk, long offset,
                                                   int length) {
        return send(node, WriteRequest.trim(nextRequestId.getAndIncrement(), chain, chunk, offset, length));
    }

    @Override
    public CompletableFuture<StorageResponse> extents(NodeAddress node, ChainAddress chain, ChunkId chunk, long offset,
                                                      int length) {
        return send(node, new ExtentsRequest(nextRequestId.getAndIncrement(), chain, chunk, offset, length));
    }

    public CompletableFuture<StorageResponse> ping(NodeAddress node) {
        return send(node, new PingRequest(nextRequestId.getAndIncrement()));
    }

    /** A connection's identity: the node, and the caller's event loop it lives on (null: the client's own loops). */
    private record Route(NodeAddress node, EventLoop loop) {
    }

    /**
     * Lets requests sent from {@code loops}' threads use connections living on the sending loop.
     * The loops must be of the transport this client uses (epoll when available, else NIO) and
     * outlive the client's use of them; closing the client closes those connections, not the loops.
     */
    public void attachTo(EventLoopGroup loops) {
        Set<EventExecutor> set = new HashSet<>();
        Map<EventExecutor, DirectAnswers> answers = new HashMap<>();
        // Client ids only need to differ between the loops of all gateways a storage node serves.
        long base = new java.security.SecureRandom().nextLong() & ~0xffffL;
        for (EventExecutor e : loops) {
            set.add(e);
            if (directAnswers) {
                answers.put(e, new DirectAnswers(base | (answers.size() + 1)));
            }
        }
        loopAnswers = Map.copyOf(answers);
        attachable = Set.copyOf(set);
    }

    private EventLoop callerLoop() {
        Set<EventExecutor> loops = attachable;
        if (loops.isEmpty()) {
            return null;
        }
        EventExecutor current = ThreadExecutorMap.currentExecutor();
        return current instanceof EventLoop loop && loops.contains(loop) ? loop : null;
    }

    /** Writes of {@code loop} waiting for a tail's direct answer; call on that loop (tests). */
    int directWaiting(EventExecutor loop) {
        DirectAnswers answers = loopAnswers.get(loop);
        return answers == null ? 0 : answers.size();
    }

    /** Number of currently open (or opening) connections; for tests and metrics. */
    public int connectionCount() {
        return connections.size();
    }

    private CompletableFuture<StorageResponse> send(NodeAddress node, StorageMessage message) {
        CompletableFuture<StorageResponse> result = new CompletableFuture<>();
        if (closed) {
            if (message instanceof WriteRequest w) {
                w.data().release();
            }
            result.completeExceptionally(new StorageRequestException(StorageRequestException.Kind.CLIENT_CLOSED,
                    node, "storage client closed", null));
            return result;
        }
        connection(new Route(node, callerLoop())).send(message, result);
        return result;
    }

    private StorageConnection connection(Route route) {
        StorageConnection conn;
        while (true) {
            conn = connections.get(route);
            if (conn != null && !conn.isDead()) {
                return conn;
            }
            // None yet, or a dead one whose removal has not run yet: a new request deserves a new try.
            StorageConnection fresh = new StorageConnection(route.node(), timeoutNanos,
                    route.loop() == null ? null : loopAnswers.get(route.loop()));
            boolean won = conn == null ? connections.putIfAbsent(route, fresh) == null
                    : connections.replace(route, conn, fresh);
            if (won) {
                connect(route, fresh);
                return fresh;
            }
        }
    }

    private void connect(Route route, StorageConnection conn) {
        NodeAddress node = conn.nodeAddress();
        ChannelFuture cf = (route.loop() == null ? bootstrap.clone() : bootstrap.clone(route.loop()))
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(StorageFrameDecoder.gathering(), StorageFrameEncoder.INSTANCE, conn);
                    }
                })
                .connect(node.host(), node.port());
        conn.connecting(cf);
        // Forget the connection once it is gone so that the next request reconnects.
        cf.channel().closeFuture().addListener(f -> connections.remove(route, conn));
        cf.addListener(f -> {
            if (!f.isSuccess()) {
                connections.remove(route, conn);
                return;
            }
            DirectAnswers answers = route.loop() == null ? null : loopAnswers.get(route.loop());
            if (answers != null) {
                // This loop's writes may be answered here by the node's tails from now on.
                CompletableFuture<StorageResponse> registered = new CompletableFuture<>();
                conn.send(new AnswerToRequest(nextRequestId.getAndIncrement(), answers.clientId), registered);
                registered.whenComplete((r, e) -> {
                    if (r != null) {
                        if (r.isOk()) {
                            conn.markRegistered();
                        } else {
                            LOG.debug("storage node {} refused direct answers: {}", node, r.message());
                        }
                        r.data().release();
                    }
                });
            }
        });
    }

    @Override
    public void close() {
        closed = true;
        for (StorageConnection c : connections.values()) {
            ChannelFuture cf = c.connectFuture();
            if (cf != null) {
                cf.channel().close();
            }
        }
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
}
