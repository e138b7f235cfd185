package io.fastblock.storage.net;

import io.fastblock.protocol.AnswerToRequest;
import io.fastblock.protocol.OpCode;
import io.fastblock.protocol.ProtocolException;
import io.fastblock.protocol.Status;
import io.fastblock.protocol.StorageMessage;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.WriteRequest;
import io.fastblock.storage.chain.ReplicaService;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.util.ReferenceCountUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves one connection: hands each request to the {@link ReplicaService} and writes its answer.
 * Stops reading from the socket while {@link #MAX_OUTSTANDING} requests are unanswered and
 * resumes below half of that, so a fast sender cannot queue unbounded work.
 */
public final class StorageRequestHandler extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(StorageRequestHandler.class);
    public static final int MAX_OUTSTANDING = 256;

    private final ReplicaService service;
    private final InflightRequests inflight;
    private final ClientChannels clients;
    private int outstanding; // event-loop confined

    public StorageRequestHandler(ReplicaService service, InflightRequests inflight) {
        this(service, inflight, new ClientChannels());
    }

    /** {@code clients}: where ANSWER_TO registrations go (the service's tails answer through them). */
    public StorageRequestHandler(ReplicaService service, InflightRequests inflight, ClientChannels clients) {
        this.service = service;
        this.inflight = inflight;
        this.clients = clients;
    }

    /** Requests taken from this connection and not answered yet; call on the connection's loop. */
    public int outstanding() {
        return outstanding;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof StorageResponse r) {
            r.data().release();
            LOG.warn("closing {}: a client sent a response frame", ctx.channel().remoteAddress());
            ctx.close();
            return;
        }
        if (!(msg instanceof StorageMessage m)) {
            ReferenceCountUtil.release(msg);
            ctx.close();
            return;
        }
        if (m instanceof AnswerToRequest a) {
            clients.register(a.clientId(), ctx.channel());
            ctx.writeAndFlush(StorageResponse.ok(a.requestId(), OpCode.ANSWER_TO));
            return;
        }
        // A client's write that the tail answered directly needs no answer from here (the head).
        boolean directlyAnswered = m instanceof WriteRequest w && w.answerDirect() && !w.forwarded();
        outstanding++;
        inflight.begin(m.op());
        if (outstanding >= MAX_OUTSTANDING) {
            ctx.channel().config().setAutoRead(false);
        }
        service.handle(m, ctx.alloc()).whenComplete((resp, err) -> {
            StorageResponse answer = resp != null ? resp
                    : StorageResponse.error(m.requestId(), m.op(), Status.IO_ERROR, "node " + service.nodeId() + ": " + err);
            inflight.end(m.op());
            if (directlyAnswered && answer.isOk() && answer.answered()) {
                answer = null;
            }
            StorageResponse toSend = answer;
            // Reads of an idle stripe complete on this loop (ChunkStore.readAsync); the rest (writes done
            // by a group commit or a stripe) hop to it once. The pipeline's FlushConsolidationHandler
            // makes the answers of one batch leave in one send either way.
            if (ctx.executor().inEventLoop()) {
                answer(ctx, toSend);
            } else {
                try {
                    ctx.executor().execute(() -> answer(ctx, toSend));
                } catch (java.util.concurrent.RejectedExecutionException serverStopping) {
                    if (toSend != null) {
                        toSend.data().release();
                    }
                }
            }
        });
    }

    /**
     * On the event loop, so the channel cannot close between the check and the write. An answer for a
     * connection that closed meanwhile is released here: written to a closed channel whose pipeline
     * has lost its encoder, the record (not reference-counted) would keep its buffer forever (a
     * 1 MiB read each; a gateway's broken connection under load ran a server out of direct memory).
     */
    private void answer(ChannelHandlerContext ctx, StorageResponse answer) {
        if (answer != null) { // null: the tail answered the client, nothing to send from here
            if (ctx.channel().isActive()) {
                ctx.writeAndFlush(answer);
            } else {
                answer.data().release();
            }
        }
        answered(ctx);
    }

    private void answered(ChannelHandlerContext ctx) {
        outstanding--;
        if (!ctx.channel().config().isAutoRead() && outstanding <= MAX_OUTSTANDING / 2) {
            ctx.channel().config().setAutoRead(true);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        Throwable root = cause;
        while (root.getCause() != null && !(root instanceof ProtocolException) && !(root instanceof TooLongFrameException)) {
            root = root.getCause();
        }
        if (root instanceof ProtocolException || root instanceof TooLongFrameException) {
            LOG.warn("closing {}: protocol error: {}", ctx.channel().remoteAddress(), root.getMessage());
        } else {
            LOG.warn("closing {}: {}", ctx.channel().remoteAddress(), cause.toString());
        }
        ctx.close();
    }

}
