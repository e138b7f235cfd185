package io.fastblock.gateway.client;

import io.fastblock.protocol.ReadRequest;
import io.fastblock.protocol.StorageMessage;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.WriteRequest;
import io.fastblock.protocol.codec.StorageFrameDecoder;
import io.fastblock.protocol.codec.StorageFrameEncoder;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/** A real Netty server speaking the storage protocol; what it answers is up to the test. */
final class TestStorageServer implements AutoCloseable {
    private final EventLoopGroup group = new NioEventLoopGroup(1);
    private final Channel server;
    final Map<Channel, Boolean> clients = new ConcurrentHashMap<>();

    /** {@code handler} owns the payloads of the requests it gets. */
    TestStorageServer(BiConsumer<Channel, StorageMessage> handler) {
        server = new ServerBootstrap()
                .group(group)
                .channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        clients.put(ch, true);
                        ch.closeFuture().addListener(f -> clients.remove(ch));
                        ch.pipeline().addLast(new StorageFrameDecoder(), StorageFrameEncoder.INSTANCE,
                                new SimpleChannelInboundHandler<StorageMessage>() {
                                    @Override
                                    protected void channelRead0(ChannelHandlerContext ctx, StorageMessage msg) {
                                        handler.accept(ctx.channel(), msg);
                                    }
                                });
                    }
                })
                .bind("127.0.0.1", 0).syncUninterruptibly().channel();
    }

    /** A server that stores written bytes in {@code store} (chunk key -> bytes) and serves reads from it. */
    static TestStorageServer storing(Map<String, byte[]> store, int chunkSize) {
        return new TestStorageServer((ch, msg) -> {
            if (msg instanceof WriteRequest w) {
                byte[] chunk = store.computeIfAbsent(w.chunk().toString(), k -> new byte[chunkSize]);
                w.data().getBytes(w.data().readerIndex(), chunk, (int) w.offset(), w.length());
                w.data().release();
                ch.writeAndFlush(StorageResponse.ok(w.requestId(), w.op()));
            } else if (msg instanceof ReadRequest r) {
                byte[] chunk = store.get(r.chunk().toString());
                ByteBuf out = ch.alloc().buffer(r.length());
                if (chunk == null) {
                    out.writeZero(r.length());
                } else {
                    out.writeBytes(chunk, (int) r.offset(), r.length());
                }
                ch.writeAndFlush(StorageResponse.ok(r.requestId(), r.op(), out));
            } else {
                ch.writeAndFlush(StorageResponse.ok(msg.requestId(), msg.op()));
            }
        });
    }

    NodeAddress address() {
        return new NodeAddress("127.0.0.1", ((InetSocketAddress) server.localAddress()).getPort());
    }

    void dropClients() {
        clients.keySet().forEach(Channel::close);
    }

    private boolean closed;

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        server.close().syncUninterruptibly();
        dropClients();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
