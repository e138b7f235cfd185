package io.fastblock.bench.initiator;

import io.fastblock.gateway.iscsi.pdu.IscsiPduEncoder;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.flush.FlushConsolidationHandler;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Opens {@link IscsiSession}s: one TCP connection each, on a shared set of event loops (native
 * epoll when available, else NIO) with pooled direct buffers. Flushes issued while the event loop
 * is processing a read are gathered into one, so the commands a burst of completions triggers go
 * out in one write.
 */
public final class IscsiInitiator implements AutoCloseable {
    public static final String DEFAULT_NAME = "iqn.2026-11.io.fastblock:bench";

    private final EventLoopGroup group;
    private final boolean epoll;
    private final String initiatorName;

    public IscsiInitiator(int threads, String initiatorName) {
        this.epoll = Epoll.isAvailable();
        this.group = epoll ? new EpollEventLoopGroup(threads) : new NioEventLoopGroup(threads);
        this.initiatorName = initiatorName;
    }

    public boolean nativeTransport() {
        return epoll;
    }

    /** Connects and logs in; completes with the session in full feature phase. */
    public CompletableFuture<IscsiSession> login(IscsiUrl url, long timeoutMillis) {
        IscsiSession session = new IscsiSession(url, initiatorName);
        Bootstrap b = new Bootstrap().group(group)
                .channel(epoll ? EpollSocketChannel.class : NioSocketChannel.class)
                .option(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(timeoutMillis, Integer.MAX_VALUE))
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast("flush", new FlushConsolidationHandler(256, false));
                        ch.pipeline().addLast("decoder",
                                new TargetPduDecoder(OperationalKeys.OUR_MAX_RECV_DATA_SEGMENT_LENGTH));
                        ch.pipeline().addLast("encoder", new IscsiPduEncoder());
                        ch.pipeline().addLast("session", session);
                    }
                });
        ChannelFuture cf = b.connect(url.host(), url.port());
        CompletableFuture<IscsiSession> result = new CompletableFuture<>();
        cf.addListener(f -> {
            if (!f.isSuccess()) {
                result.completeExceptionally(new java.io.IOException("cannot connect to " + url + ": "
                        + f.cause().getMessage(), f.cause()));
                return;
            }
            cf.channel().eventLoop().schedule(() -> {
                if (!session.loggedIn().isDone()) {
                    session.loggedIn().completeExceptionally(new LoginException(
                            "login to " + url + " did not finish within " + timeoutMillis + " ms", -1, -1));
                    cf.channel().close();
                }
            }, timeoutMillis, TimeUnit.MILLISECONDS);
            session.loggedIn().whenComplete((s, err) -> {
                if (err != null) {
                    result.completeExceptionally(err);
                } else {
                    result.complete(s);
                }
            });
        });
        return result;
    }

    @Override
    public void close() {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
