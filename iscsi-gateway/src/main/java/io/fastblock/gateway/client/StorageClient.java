package io.fastblock.gateway.client;

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
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gateway's connections to storage nodes, shared by all its volumes: one lazily opened
 * connection per node address, request ids unique across the client, a timeout per request, and
 * all outstanding requests of a connection failed when it drops (the next request reconnects).
 * Futures complete on the connection's event loop: continuations must not block.
 */
public final class StorageClient implements StorageTransport, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(StorageClient.class);

    private final EventLoopGroup group;
    private final Bootstrap bootstrap;
    private final long timeoutNanos;
    private final ConcurrentHashMap<NodeAddress, StorageConnection> connections = new ConcurrentHashMap<>();
    private final AtomicLong nextRequestId = new AtomicLong(1);
    private volatile boolean closed;

    public StorageClient(Duration requestTimeout, int ioThreads) {
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
        StorageConnection conn;
        while (true) {
            conn = connections.get(node);
            if (conn != null && !conn.isDead()) {
                break;
            }
            // None yet, or a dead one whose removal has not run yet: a new request deserves a new try.
            StorageConnection fresh = new StorageConnection(node, timeoutNanos);
            boolean won = conn == null ? connections.putIfAbsent(node, fresh) == null
                    : connections.replace(node, conn, fresh);
            if (won) {
                conn = fresh;
                connect(fresh);
                break;
            }
        }
        conn.send(message, result);
        return result;
    }

    private void connect(StorageConnection conn) {
        NodeAddress node = conn.nodeAddress();
        ChannelFuture cf = bootstrap.clone()
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(new StorageFrameDecoder(), StorageFrameEncoder.INSTANCE, conn);
                    }
                })
                .connect(node.host(), node.port());
        conn.connecting(cf);
        // Forget the connection once it is gone so that the next request reconnects.
        cf.channel().closeFuture().addListener(f -> connections.remove(node, conn));
        cf.addListener(f -> {
            if (!f.isSuccess()) {
                connections.remove(node, conn);
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
