package io.fastblock.storage.net;

import io.fastblock.protocol.StorageMessage;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.WriteRequest;
import io.fastblock.protocol.codec.StorageFrameDecoder;
import io.fastblock.protocol.codec.StorageFrameEncoder;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;

/**
 * One connection to a storage server, with request-id correlation. Requests are sent in the
 * order {@link #send} is called, including those issued while the connection is still being
 * set up (chain replication relies on that FIFO order).
 */
public final class StorageClient implements AutoCloseable {
    /** Flushes held back at most this many writes while more are coming (Netty's consolidation). */
    public static final int FLUSH_AFTER = 64;
    /** How often the connection's loop looks for requests past their deadline. */
    static final long SWEEP_MILLIS = 25;
    private final String peer;
    private final Channel channel;
    private final Map<Long, Waiting> pending = new ConcurrentHashMap<>();
    private final ScheduledFuture<?> sweep;
    private final AtomicLong ids = new AtomicLong();
    private final CompletableFuture<StorageClient> ready = new CompletableFuture<>();
    private final Object order = new Object();
    private List<StorageMessage> queued = new ArrayList<>();
    private IOException failure;

    /** A request's answer, and when to give up on it ({@link System#nanoTime}; {@link Long#MAX_VALUE}: never). */
    private record Waiting(CompletableFuture<StorageResponse> future, long deadline) {
    }

    private StorageClient(String peer, ChannelFuture connect) {
        this.peer = peer;
        this.channel = connect.channel();
        // One periodic check per connection instead of a timer per request: CompletableFuture's
        // orTimeout put every forwarded write into, and took it out of, a shared delay queue.
        ScheduledFuture<?> s;
        try {
            s = channel.eventLoop().scheduleAtFixedRate(this::expire, SWEEP_MILLIS, SWEEP_MILLIS, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            s = null; // the loop is shutting down: the connection fails without answers to wait for
        }
        this.sweep = s;
    }

    public static StorageClient connect(EventLoopGroup group, String host, int port) {
        String peer = host + ":" + port;
        StorageClient[] self = new StorageClient[1];
        Bootstrap b = new Bootstrap().group(group).channel(NettyTransport.channel(group))
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 5000)
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        // Requests sent together (forwards of a burst of writes) leave in one send, not one each.
                        ch.pipeline().addLast(new FlushConsolidationHandler(FLUSH_AFTER, true), new StorageFrameDecoder(),
                                StorageFrameEncoder.INSTANCE, new ResponseHandler(self));
                    }
                });
        ChannelFuture cf = b.connect(host, port);
        StorageClient client = new StorageClient(peer, cf);
        self[0] = client;
        cf.addListener(f -> client.connected(f.isSuccess() ? null : f.cause()));
        return client;
    }

    public String peer() {
        return peer;
    }

    public boolean isOpen() {
        synchronized (order) {
            return failure == null;
        }
    }

    /** Completes when the connection is up (or fails when it cannot be made). */
    public CompletableFuture<StorageClient> ready() {
        return ready;
    }

    public StorageClient awaitConnected(long timeout, TimeUnit unit) throws Exception {
        return ready.get(timeout, unit);
    }

    private void connected(Throwable cause) {
        List<StorageMessage> flush;
        synchronized (order) {
            flush = queued;
            queued = null;
            if (cause != null) {
                failure = new IOException("cannot connect to " + peer + ": " + cause.getMessage(), cause);
            } else {
                for (StorageMessage m : flush) {
                    channel.write(m);
                }
                channel.flush();
                flush = List.of();
            }
        }
        if (cause != null) {
            for (StorageMessage m : flush) {
                releasePayload(m);
            }
            failAll(failure);
            ready.completeExceptionally(failure);
        } else {
            ready.complete(this);
        }
    }

    /** Sends the request built for a fresh request id; takes ownership of its payload. */
    public CompletableFuture<StorageResponse> send(LongFunction<StorageMessage> build) {
        return send(build, 0);
    }

    /**
     * As {@link #send(LongFunction)}; with {@code timeoutMillis} > 0 the answer fails with a
     * {@link TimeoutException} if none came within that time (give or take {@link #SWEEP_MILLIS}).
     * The request stays on the wire; a late answer is dropped.
     */
    public CompletableFuture<StorageResponse> send(LongFunction<StorageMessage> build, long timeoutMillis) {
        long id = ids.incrementAndGet();
        StorageMessage msg = build.apply(id);
        CompletableFuture<StorageResponse> f = new CompletableFuture<>();
        pending.put(id, new Waiting(f, timeoutMillis > 0 ? System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis)
                : Long.MAX_VALUE));
        IOException failed;
        synchronized (order) {
            failed = failure;
            if (failed == null) {
                if (queued != null) {
                    queued.add(msg);
                } else {
                    channel.writeAndFlush(msg).addListener(w -> {
                        if (!w.isSuccess()) {
                            fail(id, new IOException("send to " + peer + " failed: " + w.cause(), w.cause()));
                        }
                    });
                }
                return f;
            }
        }
        pending.remove(id);
        releasePayload(msg);
        f.completeExceptionally(failed);
        return f;
    }

    private void fail(long id, Exception e) {
        Waiting w = pending.remove(id);
        if (w != null) {
            w.future.completeExceptionally(e);
        }
    }

    private void expire() {
        long now = System.nanoTime();
        for (Map.Entry<Long, Waiting> e : pending.entrySet()) {
            long deadline = e.getValue().deadline;
            if (deadline != Long.MAX_VALUE && now - deadline >= 0) {
                fail(e.getKey(), new TimeoutException("no answer from " + peer + " in time"));
            }
        }
    }

    private void failAll(IOException e) {
        for (Long id : List.copyOf(pending.keySet())) {
            fail(id, e);
        }
    }

    private static void releasePayload(StorageMessage m) {
        if (m instanceof WriteRequest w) {
            w.data().release();
        } else if (m instanceof StorageResponse r) {
            r.data().release();
        }
    }

    private void closed() {
        if (sweep != null) {
            sweep.cancel(false);
        }
        synchronized (order) {
            if (failure == null) {
                failure = new IOException("connection to " + peer + " closed");
            }
        }
        failAll(failure);
    }

    @Override
    public void close() {
        channel.close().syncUninterruptibly();
        closed();
    }

    private static final class ResponseHandler extends ChannelInboundHandlerAdapter {
        private final StorageClient[] owner;

        ResponseHandler(StorageClient[] owner) {
            this.owner = owner;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof StorageResponse r) {
                Waiting w = owner[0].pending.remove(r.requestId());
                if (w == null || !w.future.complete(r)) {
                    r.data().release();
                }
            } else {
                // A server only ever answers: anything else means the stream is out of step.
                if (msg instanceof StorageMessage m) {
                    releasePayload(m);
                } else {
                    ReferenceCountUtil.release(msg);
                }
                ctx.close();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            owner[0].closed();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
