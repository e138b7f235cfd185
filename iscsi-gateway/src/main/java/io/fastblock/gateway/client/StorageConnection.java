package io.fastblock.gateway.client;

import io.fastblock.protocol.StorageMessage;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.WriteRequest;
import io.fastblock.protocol.codec.LoopFlush;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connection to one storage node: matches answers to requests by request id. All request
 * bookkeeping happens on the channel's event loop, so the pending map needs no lock.
 */
final class StorageConnection extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(StorageConnection.class);

    private record Pending(CompletableFuture<StorageResponse> future, ScheduledFuture<?> timeout) {
    }

    private final NodeAddress node;
    private final long timeoutNanos;
    /** The writes of this connection's loop waiting for a tail's direct answer; null off the iSCSI loops. */
    private final DirectAnswers answers;
    /** The node took this loop's client id (event loop only): its tails answer that loop's writes here. */
    private boolean registered;
    private final Map<Long, Pending> pending = new HashMap<>(); // event loop only
    private LoopFlush flush; // event loop only
    private volatile ChannelFuture connectFuture;
    /** Completes with the connect future; bridges the moment between publication and connect(). */
    private final CompletableFuture<ChannelFuture> started = new CompletableFuture<>();

    StorageConnection(NodeAddress node, long timeoutNanos) {
        this(node, timeoutNanos, null);
    }

    StorageConnection(NodeAddress node, long timeoutNanos, DirectAnswers answers) {
        this.node = node;
        this.timeoutNanos = timeoutNanos;
        this.answers = answers;
    }

    /** Event loop only. */
    boolean registered() {
        return registered && !isDead();
    }

    /** Event loop only: the node answered the registration of this loop's client id. */
    void markRegistered() {
        registered = true;
    }

    void connecting(ChannelFuture future) {
        this.connectFuture = future;
        started.complete(future);
    }

    NodeAddress nodeAddress() {
        return node;
    }

    /** Failed to connect, or connected and since closed. */
    boolean isDead() {
        ChannelFuture cf = connectFuture;
        return cf != null && cf.isDone() && (!cf.isSuccess() || !cf.channel().isActive());
    }

    ChannelFuture connectFuture() {
        return connectFuture;
    }

    /** Sends once connected; {@code message}'s payload is owned by this call from now on. */
    void send(StorageMessage message, CompletableFuture<StorageResponse> result) {
        ChannelFuture cf = connectFuture;
        if (cf == null) {
            started.thenAccept(f -> send(message, result));
        } else if (cf.isDone()) {
            sendConnected(cf, message, result);
        } else {
            cf.addListener(f -> sendConnected(cf, message, result));
        }
    }

    private void sendConnected(ChannelFuture cf, StorageMessage message, CompletableFuture<StorageResponse> result) {
        if (!cf.isSuccess()) {
            unsent(message);
            result.completeExceptionally(new StorageRequestException(StorageRequestException.Kind.CONNECT_FAILED,
                    node, String.valueOf(cf.cause()), cf.cause()));
            return;
        }
        Channel ch = cf.channel();
        EventLoop loop = ch.eventLoop();
        if (loop.inEventLoop()) {
            write(ch, message, result);
            return;
        }
        try {
            loop.execute(() -> write(ch, message, result));
        } catch (RejectedExecutionException e) {
            unsent(message);
            result.completeExceptionally(new StorageRequestException(StorageRequestException.Kind.CLIENT_CLOSED,
                    node, "event loop shut down", e));
        }
    }

    private void write(Channel ch, StorageMessage message, CompletableFuture<StorageResponse> result) {
        // While active and on the loop, the pipeline (with the encoder that takes the payload) is intact.
        if (!ch.isActive()) {
            unsent(message);
            result.completeExceptionally(new StorageRequestException(StorageRequestException.Kind.CONNECTION_LOST,
                    node, "connection closed", null));
            return;
        }
        long id = message.requestId();
        ScheduledFuture<?> timeout = ch.eventLoop().schedule(() -> {
            Pending p = remove(id);
            if (p != null) {
                p.future().completeExceptionally(new StorageRequestException(StorageRequestException.Kind.TIMEOUT,
                        node, message.op() + " request " + id + " got no answer in "
                        + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms", null));
            }
        }, timeoutNanos, TimeUnit.NANOSECONDS);
        pending.put(id, new Pending(result, timeout));
        AnswerSpin.awaiting();
        if (flush == null) {
            flush = new LoopFlush(ch);
        }
        ch.write(message).addListener(f -> {
            if (!f.isSuccess()) {
                Pending p = remove(id);
                if (p != null) {
                    p.timeout().cancel(false);
                    p.future().completeExceptionally(new StorageRequestException(
                            StorageRequestException.Kind.CONNECTION_LOST, node, "write failed: " + f.cause(), f.cause()));
                }
                ch.close();
            }
        });
        flush.soon(); // the commands of one iSCSI read batch go out in one write
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof StorageResponse response)) {
            LOG.warn("storage node {} sent a request ({}); closing", node, msg.getClass().getSimpleName());
            releasePayload(msg);
            ctx.close();
            return;
        }
        if (settle(response)) {
            return;
        }
        // A tail's direct answer to a write pending on the head's connection (same loop).
        DirectAnswers.Waiting w = answers == null ? null : answers.done(response.requestId());
        if (w != null && w.head().settle(response)) {
            return;
        }
        // Timed out earlier, answered already, or an id we never sent: nobody will consume the data.
        response.data().release();
    }

    /**
     * Completes the pending request {@code response} answers (event loop only), which may have
     * come over another connection; false, and the response untouched, if none is pending here.
     */
    boolean settle(StorageResponse response) {
        Pending p = remove(response.requestId());
        if (p == null) {
            return false;
        }
        p.timeout().cancel(false);
        if (!p.future().complete(response)) {
            response.data().release();
        }
        return true;
    }

    /** Fails a pending request whose answer was to come over another connection, which closed. */
    void lostElsewhere(long requestId, NodeAddress tail) {
        Pending p = remove(requestId);
        if (p != null) {
            p.timeout().cancel(false);
            p.future().completeExceptionally(new StorageRequestException(StorageRequestException.Kind.CONNECTION_LOST,
                    tail, "connection to the tail that was to answer write " + requestId + " closed", null));
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        failAll("connection closed");
        if (answers != null) {
            for (var lost : answers.lostWith(this)) {
                lost.getValue().head().lostElsewhere(lost.getKey(), node);
            }
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        LOG.warn("connection to storage node {} failed: {}", node, cause.toString());
        ctx.close();
    }

    /** Takes a request's entry out (event loop only), so the loop no longer awaits its answer. */
    private Pending remove(long id) {
        Pending p = pending.remove(id);
        if (p != null) {
            AnswerSpin.answered();
            if (answers != null) {
                answers.done(id);
            }
        }
        return p;
    }

    int pendingCount() {
        return pending.size();
    }

    private void failAll(String why) {
        if (pending.isEmpty()) {
            return;
        }
        List<Pending> all = new ArrayList<>(pending.values());
        if (answers != null) {
            for (Long id : pending.keySet()) {
                answers.done(id);
            }
        }
        pending.clear();
        for (Pending p : all) {
            AnswerSpin.answered();
            p.timeout().cancel(false);
            p.future().completeExceptionally(new StorageRequestException(
                    StorageRequestException.Kind.CONNECTION_LOST, node, why, null));
        }
    }

    /** A request that failed before it was sent: its payload goes back, and it waits for no direct answer either. */
    private void unsent(StorageMessage message) {
        releasePayload(message);
        if (answers != null) {
            answers.done(message.requestId());
        }
    }

    private static void releasePayload(Object message) {
        if (message instanceof WriteRequest w) {
            w.data().release();
        } else if (message instanceof StorageResponse r) {
            r.data().release();
        } else {
            ReferenceCountUtil.release(message);
        }
    }
}
