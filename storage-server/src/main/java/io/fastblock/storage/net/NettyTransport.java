package io.fastblock.storage.net;

import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;

/** Native epoll where the platform has it, NIO elsewhere; the channel classes must match the group. */
public final class NettyTransport {
    private NettyTransport() {
    }

    public static EventLoopGroup group(int threads, String name) {
        DefaultThreadFactory tf = new DefaultThreadFactory(name, true);
        return Epoll.isAvailable() ? new EpollEventLoopGroup(threads, tf) : new NioEventLoopGroup(threads, tf);
    }

    public static Class<? extends ServerChannel> serverChannel(EventLoopGroup group) {
        return group instanceof EpollEventLoopGroup ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }

    public static Class<? extends Channel> channel(EventLoopGroup group) {
        return group instanceof EpollEventLoopGroup ? EpollSocketChannel.class : NioSocketChannel.class;
    }
}
