package io.fastblock.gateway.iscsi.session;

import io.fastblock.gateway.client.AnswerSpin;
import io.fastblock.gateway.iscsi.TargetAccess;
import io.fastblock.gateway.iscsi.TargetCatalog;
import io.fastblock.gateway.iscsi.login.LoginNegotiator;
import io.fastblock.gateway.iscsi.login.LoginReply;
import io.fastblock.gateway.iscsi.login.LoginRequest;
import io.fastblock.gateway.iscsi.login.LoginStatus;
import io.fastblock.gateway.iscsi.login.SessionParams;
import io.fastblock.gateway.iscsi.login.SessionRegistry;
import io.fastblock.gateway.iscsi.login.TextKeys;
import io.fastblock.gateway.iscsi.pdu.IscsiPdu;
import io.fastblock.gateway.iscsi.pdu.IscsiPduDecoder;
import io.fastblock.gateway.iscsi.pdu.IscsiPduEncoder;
import io.fastblock.gateway.iscsi.pdu.Opcode;
import io.fastblock.gateway.scsi.ScsiCommandHandler;
import io.fastblock.gateway.scsi.ScsiNexus;
import io.fastblock.gateway.scsi.ScsiResult;
import io.fastblock.gateway.scsi.ScsiStatus;
import io.fastblock.gateway.scsi.Sense;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.util.AbstractMap.SimpleImmutableEntry;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One iSCSI connection (= one session, MaxConnections=1): login phase through
 * {@link LoginNegotiator}, then the full feature phase: CmdSN window, SCSI tasks with
 * immediate/unsolicited/solicited data-out, Data-In, responses, NOP, TMF, Text, Logout, Reject.
 * Everything runs on the channel's event loop; device completions hop back onto it.
 */
public final class IscsiConnectionHandler extends ChannelInboundHandlerAdapter {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(IscsiConnectionHandler.class);

    static final int REJECT_DATA_DIGEST_ERROR = 0x02;
    static final int REJECT_PROTOCOL_ERROR = 0x04;
    static final int REJECT_COMMAND_NOT_SUPPORTED = 0x05;
    static final int REJECT_INVALID_PDU_FIELD = 0x09;

    private final Portal portal;
    private final TargetCatalog catalog;
    private final SessionRegistry registry;
    private final LogicalUnits units;
    private final int queueDepth;

    private ChannelHandlerContext ctx;
    private io.fastblock.protocol.codec.LoopFlush responseFlush; // event loop only
    private LoginNegotiator login;
    private boolean loginPending;
    /** Login text split over several PDUs (C=1), joined before negotiation. */
    private ByteBuf loginText;
    private static final int MAX_LOGIN_TEXT = 64 * 1024;
    /** Rest of a Text Response longer than the initiator's segment limit. */
    private ByteBuf pendingText;
    private int pendingTextTtt;
    private volatile boolean fullFeature;
    private boolean closed;
    private int statSN;
    private long isid;
    private int tsih;

    private SessionParams params;
    private CommandWindow window;
    private ScsiNexus nexus;
    private ScsiCommandHandler scsi;
    private String targetName;
    private final Map<Integer, ScsiTask> tasks = new HashMap<>();
    private final Map<Integer, ScsiTask.R2TState> r2ts = new HashMap<>();
    private int nextTtt = 1;
    private ScheduledFuture<?> loginTimer;
    private ScheduledFuture<?> keepalive;
    private long lastReceivedNanos = System.nanoTime();
    /** TTT of our unanswered keepalive NOP-In and when it left, or NO_TAG. */
    private int pingTtt = IscsiPdu.NO_TAG;
    private long pingSentNanos;
    private boolean logoutRequested;
    /** Answered commands' slots are withheld and a {@link DataBudget#whenRoom} callback is pending. */
    private boolean awaitingRoom;

    public IscsiConnectionHandler(Portal portal) {
        this.portal = portal;
        this.catalog = portal.catalog;
        this.registry = portal.registry;
        this.units = portal.units;
        this.queueDepth = portal.queueDepth;
    }

    /** The target of a normal session in full feature phase, else null. */
    String target() {
        return targetName;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        Runnable closer = () -> ctx.executor().execute(() -> ctx.close());
        this.login = new LoginNegotiator(catalog, registry, closer);
        portal.joined(this);
        long loginMillis = portal.settings.loginTimeout().toMillis();
        loginTimer = ctx.executor().schedule(() -> {
            if (!fullFeature && !closed) {
                LOG.warn("{}: login not finished within {} ms, closing", ctx.channel().remoteAddress(), loginMillis);
                closed = true;
                ctx.close();
            }
        }, loginMillis, TimeUnit.MILLISECONDS);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        IscsiPdu pdu = (IscsiPdu) msg;
        lastReceivedNanos = System.nanoTime();
        portal.countPdu();
        try {
            if (closed) {
                return;
            }
            if (!fullFeature) {
                loginPhase(pdu);
            } else {
                fullFeaturePhase(pdu);
            }
        } finally {
            pdu.release();
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof java.io.IOException) {
            LOG.warn("connection {} failed: {}", ctx.channel().remoteAddress(), cause.toString());
        } else {
            LOG.error("connection {}: bug in the iSCSI layer, closing", ctx.channel().remoteAddress(), cause);
        }
        ctx.close();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        closed = true;
        portal.left(this);
        if (loginTimer != null) {
            loginTimer.cancel(false);
        }
        if (keepalive != null) {
            keepalive.cancel(false);
        }
        if (loginText != null) {
            loginText.release();
            loginText = null;
        }
        if (pendingText != null) {
            pendingText.release();
            pendingText = null;
        }
        if (window != null) {
            window.discardAll();
        }
        for (ScsiTask t : tasks.values()) {
            if (!t.executing) {
                t.release();
            } else {
                t.aborted = true; // released when its I/O completes
            }
        }
        tasks.clear();
        r2ts.clear();
        if (fullFeature) {
            LOG.info("session tsih={} of {} ended", tsih, login.initiatorName());
            registry.remove(tsih);
            if (targetName != null) {
                units.release(targetName);
            }
        } else if (login.device() != null) {
            units.discard(login.targetName(), login.device());
        }
        if (scsi != null) {
            scsi.detach(nexus);
        }
        ctx.fireChannelInactive();
    }

    // ---- login ------------------------------------------------------------------------------

    private void loginPhase(IscsiPdu pdu) {
        if (pdu.opcode() != Opcode.LOGIN_REQUEST || loginPending) {
            // Anything else before full feature phase is a protocol error.
            LOG.warn("{}: opcode 0x{} during login, closing", ctx.channel().remoteAddress(),
                    Integer.toHexString(pdu.opcode()));
            ctx.close();
            closed = true;
            return;
        }
        if ((pdu.flags() & 0x40) != 0) {
            // C=1: the text continues in the next Login Request; gather it and answer empty-handed.
            if (loginText == null) {
                loginText = ctx.alloc().buffer();
            }
            if (loginText.readableBytes() + pdu.dataSegmentLength() > MAX_LOGIN_TEXT) {
                LoginRequest req = LoginRequest.of(pdu, Map.of());
                sendLogin(req, LoginReply.failure(LoginStatus.INITIATOR_ERROR, req.csg()));
                return;
            }
            loginText.writeBytes(pdu.data(), pdu.data().readerIndex(), pdu.dataSegmentLength());
            LoginRequest req = LoginRequest.of(pdu, Map.of());
            if (statSN == 0 && login.initiatorName() == null) {
                statSN = req.expStatSN();
            }
            sendLogin(req, new LoginReply(LoginStatus.SUCCESS, false, req.csg(), 0, 0, List.of(), false));
            return;
        }
        ByteBuf text = pdu.data();
        if (loginText != null) {
            loginText.writeBytes(text, text.readerIndex(), text.readableBytes());
            text = loginText;
        }
        Map<String, String> keys;
        try {
            keys = TextKeys.parse(text);
        } catch (TextKeys.MalformedKeysException e) {
            LOG.warn("{}: bad login keys: {}", ctx.channel().remoteAddress(), e.getMessage());
            LoginRequest req = LoginRequest.of(pdu, Map.of());
            sendLogin(req, LoginReply.failure(LoginStatus.INITIATOR_ERROR, req.csg()));
            return;
        }
        if (loginText != null) {
            loginText.release();
            loginText = null;
        }
        LoginRequest req = LoginRequest.of(pdu, keys);
        if (statSN == 0 && login.initiatorName() == null) {
            statSN = req.expStatSN();
        }
        loginPending = true;
        login.process(req).whenCompleteAsync((reply, err) -> {
            loginPending = false;
            if (closed) {
                // The connection went away while the target was being opened or the session registered.
                if (login.device() != null) {
                    units.discard(login.targetName(), login.device());
                }
                if (reply != null && reply.fullFeature()) {
                    registry.remove(reply.tsih());
                }
                return;
            }
            if (err != null) {
                LOG.warn("login failed", err);
                reply = LoginReply.failure(LoginStatus.TARGET_ERROR, req.csg());
            }
            sendLogin(req, reply);
        }, ctx.executor());
    }

    private void sendLogin(LoginRequest req, LoginReply reply) {
        IscsiPdu rsp = IscsiPdu.create(ctx.alloc(), Opcode.LOGIN_RESPONSE);
        int flags = (reply.transit() ? 0x80 : 0) | (reply.csg() << 2) | (reply.transit() ? reply.nsg() : 0);
        rsp.flags(flags).byteAt(2, 0).byteAt(3, 0);
        rsp.bhs().setInt(8, (int) (req.isid() >>> 16));
        rsp.bhs().setShort(12, (int) req.isid());
        rsp.bhs().setShort(14, reply.failed() ? 0 : reply.tsih());
        rsp.itt(req.itt());
        rsp.sequence(statSN++, req.cmdSN(), req.cmdSN() + queueDepth - 1);
        rsp.byteAt(36, LoginStatus.statusClass(reply.status())).byteAt(37, LoginStatus.statusDetail(reply.status()));
        if (!reply.keys().isEmpty()) {
            rsp.data(TextKeys.encode(ctx.alloc(), reply.keys()));
        }
        if (reply.failed()) {
            closed = true;
            ctx.writeAndFlush(rsp).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        ctx.writeAndFlush(rsp);
        if (reply.fullFeature()) {
            startFullFeature(req);
        }
    }

    private void startFullFeature(LoginRequest req) {
        fullFeature = true;
        isid = req.isid();
        tsih = login.tsih();
        params = login.params();
        window = new CommandWindow(req.cmdSN(), queueDepth);
        if (params.headerDigest || params.dataDigest) {
            // The final Login Response is already encoded; digests start with the next PDU each way.
            ctx.pipeline().get(IscsiPduDecoder.class).digests(params.headerDigest, params.dataDigest);
            ctx.pipeline().get(IscsiPduEncoder.class).digests(params.headerDigest, params.dataDigest);
            if (params.headerDigest) {
                portal.countHeaderDigestSession();
            }
        }
        nexus = new ScsiNexus(login.initiatorName(), isid);
        if (!login.discovery()) {
            targetName = login.targetName();
            scsi = units.acquire(targetName, login.device());
        }
        loginTimer.cancel(false);
        long every = portal.settings.nopInterval().toMillis();
        keepalive = ctx.executor().scheduleWithFixedDelay(this::keepalive, every, Math.min(every, 1000),
                TimeUnit.MILLISECONDS);
        if (scsi != null) {
            nexus.onAbortRequest(() -> abortAllFromElsewhere(null, false)); // PREEMPT AND ABORT
            scsi.attach(nexus);
            scsi.device().whenLost(() -> ctx.executor().execute(() -> requestLogout("volume lost")));
        }
        LOG.info("session tsih={} {} -> {} {}", tsih, login.initiatorName(),
                login.discovery() ? "discovery" : targetName, params);
    }

    // ---- liveness and asynchronous logout ------------------------------------------------------

    /**
     * Runs every second or so: pings an initiator that has been silent for nopInterval, and closes
     * the connection when a ping stays unanswered (and nothing else arrives) for nopTimeout.
     */
    private void keepalive() {
        if (closed) {
            return;
        }
        long now = System.nanoTime();
        if (pingTtt != IscsiPdu.NO_TAG) {
            if (lastReceivedNanos - pingSentNanos >= 0) {
                pingTtt = IscsiPdu.NO_TAG; // something arrived since the ping: alive
            } else if (now - pingSentNanos >= portal.settings.nopTimeout().toNanos()) {
                LOG.warn("{}: no answer to NOP-In for {} ms, closing", ctx.channel().remoteAddress(),
                        portal.settings.nopTimeout().toMillis());
                closed = true;
                ctx.close();
                return;
            }
        }
        if (pingTtt == IscsiPdu.NO_TAG && now - lastReceivedNanos >= portal.settings.nopInterval().toNanos()) {
            ping();
        }
    }

    /**
     * A target ping (RFC 7143 11.19): a NOP-In with a fresh TTT, which the initiator answers, and which
     * carries the current ExpCmdSN and MaxCmdSN. The keepalive watches for the answer to the first
     * one outstanding; a later ping while it waits only tells the new window.
     */
    private void ping() {
        int ttt = nextTag();
        if (pingTtt == IscsiPdu.NO_TAG) {
            pingTtt = ttt;
            pingSentNanos = System.nanoTime();
        }
        IscsiPdu nop = response(Opcode.NOP_IN, IscsiPdu.NO_TAG); // StatSN not advanced
        nop.int20(ttt);
        ctx.writeAndFlush(nop);
    }

    private int nextTag() {
        int ttt = nextTtt++;
        if (ttt == IscsiPdu.NO_TAG) {
            ttt = nextTtt++;
        }
        return ttt;
    }

    /**
     * Asks the initiator to log out (Async Message, event 1) because the gateway is shutting down
     * or lost the volume. Safe from any thread.
     */
    public void requestLogout(String why) {
        if (!ctx.executor().inEventLoop()) {
            ctx.executor().execute(() -> requestLogout(why));
            return;
        }
        if (closed || !fullFeature || logoutRequested) {
            return;
        }
        logoutRequested = true;
        LOG.info("session tsih={}: asking {} to log out ({})", tsih, login.initiatorName(), why);
        IscsiPdu msg = statusResponse(Opcode.ASYNC_MESSAGE, IscsiPdu.NO_TAG);
        msg.byteAt(36, 1); // AsyncEvent 1: target requests logout
        msg.bhs().setShort(38, 0);
        msg.bhs().setShort(40, 0);
        msg.bhs().setShort(42, (int) Math.max(1, portal.settings.logoutGrace().toSeconds())); // Parameter3
        ctx.writeAndFlush(msg);
    }

    /** True once login finished (normal or discovery session). */
    public boolean inFullFeaturePhase() {
        return fullFeature && !closed;
    }

    /** Completes when the connection is closed. */
    public CompletableFuture<Void> closed() {
        CompletableFuture<Void> f = new CompletableFuture<>();
        ctx.channel().closeFuture().addListener(x -> f.complete(null));
        return f;
    }

    public void close() {
        ctx.close();
    }

    // ---- full feature phase -----------------------------------------------------------------

    private void fullFeaturePhase(IscsiPdu pdu) {
        int op = pdu.opcode();
        if (pdu.dataDigestError() && op != Opcode.SCSI_DATA_OUT && op != Opcode.SCSI_COMMAND) {
            // The header is sound: the command's CmdSN is consumed, its payload is refused.
            LOG.warn("{}: data digest error on opcode 0x{}", ctx.channel().remoteAddress(), Integer.toHexString(op));
            if (pdu.immediate() || op == Opcode.NOP_OUT && pdu.itt() == IscsiPdu.NO_TAG) {
                reject(pdu, REJECT_DATA_DIGEST_ERROR);
            } else {
                numbered(pdu, () -> reject(pdu, REJECT_DATA_DIGEST_ERROR));
            }
            return;
        }
        switch (op) {
            case Opcode.SCSI_DATA_OUT -> dataOut(pdu);
            case Opcode.SCSI_COMMAND -> {
                if (scsi == null) {
                    numbered(pdu, () -> reject(pdu, REJECT_COMMAND_NOT_SUPPORTED)); // discovery session
                } else {
                    scsiCommand(pdu);
                }
            }
            case Opcode.NOP_OUT -> {
                if (pdu.itt() == IscsiPdu.NO_TAG) {
                    return; // answer to a NOP-In or a ping that wants no reply
                }
                numbered(pdu, () -> nopIn(pdu));
            }
            case Opcode.TASK_MGMT_REQUEST -> numbered(pdu, () -> taskManagement(pdu));
            case Opcode.TEXT_REQUEST -> numbered(pdu, () -> text(pdu));
            case Opcode.LOGOUT_REQUEST -> numbered(pdu, () -> logout(pdu));
            case Opcode.LOGIN_REQUEST -> reject(pdu, REJECT_PROTOCOL_ERROR);
            default -> reject(pdu, REJECT_COMMAND_NOT_SUPPORTED); // SNACK (ERL0), vendor codes
        }
    }

    /** Runs {@code action} now for immediate PDUs, else in CmdSN order (retaining the PDU). */
    private void numbered(IscsiPdu pdu, Runnable action) {
        if (pdu.immediate()) {
            action.run();
            return;
        }
        pdu.retain();
        window.offer(pdu.cmdSN(), new CommandWindow.Deliverable() {
            @Override
            public void deliver() {
                try {
                    action.run();
                } finally {
                    pdu.release();
                }
            }

            @Override
            public void discard() {
                pdu.release();
            }
        });
    }

    private IscsiPdu response(int opcode, int itt) {
        IscsiPdu rsp = IscsiPdu.create(ctx.alloc(), opcode);
        rsp.itt(itt);
        rsp.sequence(statSN, window.expCmdSN(), window.maxCmdSN());
        return rsp;
    }

    /** A response that consumes a StatSN. */
    private IscsiPdu statusResponse(int opcode, int itt) {
        IscsiPdu rsp = response(opcode, itt);
        statSN++;
        return rsp;
    }

    private void reject(IscsiPdu pdu, int reason) {
        IscsiPdu rsp = statusResponse(Opcode.REJECT, IscsiPdu.NO_TAG);
        rsp.byteAt(2, reason);
        rsp.data(pdu.bhs().retainedDuplicate());
        ctx.writeAndFlush(rsp);
    }

    private void nopIn(IscsiPdu pdu) {
        IscsiPdu rsp = statusResponse(Opcode.NOP_IN, pdu.itt());
        rsp.lun(pdu.lun()).int20(IscsiPdu.NO_TAG);
        ByteBuf ping = pdu.data();
        int len = Math.min(ping.readableBytes(), params.initiatorMaxRecvDataSegmentLength);
        if (len > 0) {
            rsp.data(ping.retainedSlice(ping.readerIndex(), len));
        }
        ctx.writeAndFlush(rsp);
    }

    private void logout(IscsiPdu pdu) {
        int reason = pdu.flags() & 0x7f;
        IscsiPdu rsp = statusResponse(Opcode.LOGOUT_RESPONSE, pdu.itt());
        rsp.byteAt(2, reason == 2 ? 2 : 0); // reason 2 (recovery) needs ERL2
        rsp.bhs().setShort(40, params.defaultTime2Wait);
        rsp.bhs().setShort(42, 0);
        if (reason == 2) {
            ctx.writeAndFlush(rsp);
            return;
        }
        closed = true;
        // The I_T nexus ends with the logout: its RESERVE(6) goes before the initiator hears the
        // answer, which may reserve from another session right away (iscsi-test-cu Reserve6.Logout
        // lost that race on a loaded machine when the release waited for channelInactive).
        if (scsi != null) {
            scsi.detach(nexus);
        }
        ctx.writeAndFlush(rsp).addListener(ChannelFutureListener.CLOSE);
    }

    private void text(IscsiPdu pdu) {
        if (pdu.int20() != IscsiPdu.NO_TAG) {
            // Continuation of a long Text Response (or a stale one: reset, RFC 7143 11.10.4).
            if (pendingText != null && pdu.int20() == pendingTextTtt && pdu.dataSegmentLength() == 0) {
                sendTextPiece(pdu.itt(), pdu.lun());
            } else {
                reject(pdu, REJECT_PROTOCOL_ERROR);
            }
            return;
        }
        Map<String, String> keys;
        try {
            keys = TextKeys.parse(pdu.data());
        } catch (TextKeys.MalformedKeysException e) {
            reject(pdu, REJECT_INVALID_PDU_FIELD);
            return;
        }
        int itt = pdu.itt();
        long lun = pdu.lun();
        String sendTargets = keys.get("SendTargets");
        List<Map.Entry<String, String>> other = new ArrayList<>();
        keys.forEach((k, v) -> {
            if (!k.equals("SendTargets")) {
                other.add(new SimpleImmutableEntry<>(k, "NotUnderstood"));
            }
        });
        if (sendTargets == null) {
            sendText(itt, lun, other);
            return;
        }
        if (sendTargets.equals("All") || (scsi == null && sendTargets.isEmpty())) {
            visibleTargets(login.initiatorName()).whenCompleteAsync((names, err) -> {
                if (closed) {
                    return;
                }
                List<Map.Entry<String, String>> out = new ArrayList<>(other);
                if (err == null) {
                    for (String n : names) {
                        if (scsi == null || sendTargets.equals("All")) {
                            out.add(new SimpleImmutableEntry<>("TargetName", n));
                            out.add(new SimpleImmutableEntry<>("TargetAddress", portal.address.get() + ","
                                    + LoginNegotiator.PORTAL_GROUP_TAG));
                        }
                    }
                } else {
                    LOG.warn("SendTargets: catalog failed: {}", err.toString());
                }
                sendText(itt, lun, out);
            }, ctx.executor());
            return;
        }
        List<Map.Entry<String, String>> out = new ArrayList<>(other);
        String wanted = sendTargets.isEmpty() ? targetName : sendTargets;
        if (wanted != null && wanted.equals(targetName)) {
            out.add(new SimpleImmutableEntry<>("TargetName", targetName));
            out.add(new SimpleImmutableEntry<>("TargetAddress", portal.address.get() + "," + LoginNegotiator.PORTAL_GROUP_TAG));
        }
        sendText(itt, lun, out);
    }

    /** The catalog's targets for this initiator, less those whose access rule refuses it. */
    private CompletableFuture<List<String>> visibleTargets(String initiator) {
        return catalog.targetNames(initiator).thenCompose(names -> {
            List<CompletableFuture<Boolean>> rules = new ArrayList<>();
            for (String n : names) {
                rules.add(catalog.access(n, initiator).thenApply(TargetAccess::allowed));
            }
            return CompletableFuture.allOf(rules.toArray(CompletableFuture[]::new)).thenApply(v -> {
                List<String> visible = new ArrayList<>();
                for (int i = 0; i < names.size(); i++) {
                    if (rules.get(i).join()) {
                        visible.add(names.get(i));
                    }
                }
                return visible;
            });
        });
    }

    private void sendText(int itt, long lun, List<Map.Entry<String, String>> keys) {
        if (pendingText != null) {
            pendingText.release();
        }
        pendingText = keys.isEmpty() ? null : TextKeys.encode(ctx.alloc(), keys);
        pendingTextTtt = nextTtt++;
        if (pendingTextTtt == IscsiPdu.NO_TAG) {
            pendingTextTtt = nextTtt++;
        }
        sendTextPiece(itt, lun);
    }

    /**
     * Sends the next piece of a Text Response of at most the initiator's MaxRecvDataSegmentLength;
     * with more to come it sets C=1 and a TTT the initiator echoes in an empty Text Request.
     */
    private void sendTextPiece(int itt, long lun) {
        IscsiPdu rsp = statusResponse(Opcode.TEXT_RESPONSE, itt);
        rsp.lun(lun);
        int max = params.initiatorMaxRecvDataSegmentLength;
        if (pendingText == null || pendingText.readableBytes() <= max) {
            rsp.flags(0x80).int20(IscsiPdu.NO_TAG);
            if (pendingText != null) {
                rsp.data(pendingText);
                pendingText = null;
            }
        } else {
            rsp.flags(0x40).int20(pendingTextTtt);
            rsp.data(pendingText.readRetainedSlice(max));
        }
        ctx.writeAndFlush(rsp);
    }

    // ---- task management --------------------------------------------------------------------

    static final int TMF_COMPLETE = 0;
    static final int TMF_NO_TASK = 1;
    static final int TMF_NO_LUN = 2;
    static final int TMF_NOT_SUPPORTED = 5;

    static final int TMF_REASSIGN_NOT_SUPPORTED = 4;

    private void taskManagement(IscsiPdu pdu) {
        int function = pdu.flags() & 0x7f;
        int itt = pdu.itt();
        boolean lunExists = ScsiCommandHandler.isLun0(pdu.lun());
        switch (function) {
            case 1 -> { // ABORT TASK
                ScsiTask t = tasks.get(pdu.int20());
                if (t == null) {
                    // Already answered, or never seen: RFC 7143 11.5.1 (b)/(c) by RefCmdSN.
                    int ref = pdu.int32();
                    boolean seen = ref - (window.expCmdSN() - queueDepth) >= 0 && ref - pdu.cmdSN() < 0;
                    tmfResponse(itt, seen ? TMF_COMPLETE : TMF_NO_TASK);
                    return;
                }
                abort(List.of(t), () -> tmfResponse(itt, TMF_COMPLETE));
            }
            case 2 -> { // ABORT TASK SET: this nexus's tasks on the LU
                if (!lunExists) {
                    tmfResponse(itt, TMF_NO_LUN);
                    return;
                }
                abort(new ArrayList<>(tasks.values()), () -> tmfResponse(itt, TMF_COMPLETE));
            }
            case 4 -> { // CLEAR TASK SET: every nexus's tasks on the LU
                if (!lunExists) {
                    tmfResponse(itt, TMF_NO_LUN);
                    return;
                }
                luWide(Sense.COMMANDS_CLEARED_BY_ANOTHER_INITIATOR, true, () -> tmfResponse(itt, TMF_COMPLETE));
            }
            case 5 -> { // LOGICAL UNIT RESET
                if (!lunExists) {
                    tmfResponse(itt, TMF_NO_LUN);
                    return;
                }
                luWide(Sense.BUS_DEVICE_RESET, false, () -> {
                    nexus.unitAttention(Sense.BUS_DEVICE_RESET); // SAM-5: every I_T nexus, the issuer's too
                    scsi.reset();
                    tmfResponse(itt, TMF_COMPLETE);
                });
            }
            case 6, 7 -> { // TARGET WARM / COLD RESET: our targets have one LU
                luWide(Sense.POWER_ON_RESET, false, () -> {
                    nexus.unitAttention(Sense.POWER_ON_RESET);
                    scsi.reset();
                    tmfResponse(itt, TMF_COMPLETE);
                    if (function == 7) {
                        // Cold reset also ends every connection to the target, this one after its answer.
                        portal.sessionsOn(targetName).forEach(c -> {
                            if (c != this) {
                                c.close();
                            }
                        });
                        closed = true;
                        ctx.flush();
                        ctx.close();
                    }
                });
            }
            case 8 -> tmfResponse(itt, TMF_REASSIGN_NOT_SUPPORTED); // ERL 2 only
            default -> tmfResponse(itt, TMF_NOT_SUPPORTED); // CLEAR ACA (no NormACA), unknown
        }
    }

    /**
     * Aborts every task on our LU in every session that uses it; the other sessions get
     * {@code ua} (all of them, or with {@code onlyIfAborted} those that lost tasks). Runs
     * {@code then} on this event loop once no aborted task can produce data or a response anywhere.
     */
    private void luWide(Sense ua, boolean onlyIfAborted, Runnable then) {
        List<CompletableFuture<Void>> others = new ArrayList<>();
        for (IscsiConnectionHandler c : portal.sessionsOn(targetName)) {
            if (c != this) {
                others.add(c.abortAllFromElsewhere(ua, onlyIfAborted));
            }
        }
        abort(new ArrayList<>(tasks.values()), () -> CompletableFuture.allOf(others.toArray(CompletableFuture[]::new))
                .whenCompleteAsync((v, e) -> then.run(), ctx.executor()));
    }

    /** Another session reset or cleared the LU: abort our tasks there and note the unit attention. */
    CompletableFuture<Void> abortAllFromElsewhere(Sense ua, boolean onlyIfAborted) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        ctx.executor().execute(() -> {
            if (closed || nexus == null) {
                done.complete(null);
                return;
            }
            if (ua != null && (!onlyIfAborted || !tasks.isEmpty())) {
                nexus.unitAttention(ua);
            }
            abort(new ArrayList<>(tasks.values()), () -> done.complete(null));
        });
        return done;
    }

    /**
     * Aborts {@code victims}: queued ones never run, running ones are fenced (their completion is
     * dropped, no data or status is sent). {@code then} runs once each running one's device I/O
     * finished, or after abortWait at the latest so that a stuck backend cannot hold the TMF answer
     * past the initiator's own timers.
     */
    private void abort(List<ScsiTask> victims, Runnable then) {
        int[] inFlight = {0};
        boolean[] ran = {false};
        Runnable once = () -> {
            if (!ran[0]) {
                ran[0] = true;
                then.run();
            }
        };
        for (ScsiTask t : victims) {
            untrack(t);
            r2ts.values().removeIf(r -> r.task == t);
            t.aborted = true;
            if (t.executing) {
                inFlight[0]++;
                t.afterAbort = () -> {
                    if (--inFlight[0] == 0) {
                        once.run();
                    }
                };
            } else {
                t.release();
            }
        }
        if (inFlight[0] == 0) {
            once.run();
        } else {
            ctx.executor().schedule(() -> {
                if (!ran[0]) {
                    LOG.warn("session tsih={}: {} aborted command(s) still in the backend after {} ms; fenced",
                            tsih, inFlight[0], portal.settings.abortWait().toMillis());
                }
                once.run();
            }, portal.settings.abortWait().toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    private void tmfResponse(int itt, int response) {
        if (closed) {
            return;
        }
        IscsiPdu rsp = statusResponse(Opcode.TASK_MGMT_RESPONSE, itt);
        rsp.byteAt(2, response);
        ctx.writeAndFlush(rsp);
    }

    // ---- SCSI commands ----------------------------------------------------------------------

    private void scsiCommand(IscsiPdu pdu) {
        int itt = pdu.itt();
        int flags = pdu.flags();
        boolean read = (flags & 0x40) != 0;
        boolean write = (flags & 0x20) != 0;
        long edtl = pdu.int20() & 0xffffffffL;
        boolean immediate = pdu.immediate();
        if (!immediate && !window.inWindow(pdu.cmdSN())) {
            return; // outside the window: silently ignored
        }
        if (tasks.containsKey(itt) || pdu.totalAhsLength() > 0 || (read && write)) {
            // Duplicate tag, extended CDB or bidirectional: consume the CmdSN, then reject.
            numbered(pdu, () -> reject(pdu, pdu.totalAhsLength() > 0 || (read && write)
                    ? REJECT_COMMAND_NOT_SUPPORTED : REJECT_INVALID_PDU_FIELD));
            return;
        }
        ByteBuf cdb = pdu.bhs().retainedSlice(32, 16);
        long needed = write ? scsi.dataOutLength(cdb) : 0;
        int keep = (int) Math.min(Math.min(edtl, needed), ScsiCommandHandler.MAX_TRANSFER_BYTES);
        if (needed > ScsiCommandHandler.MAX_TRANSFER_BYTES) {
            keep = 0; // the command will fail; take no data
        }
        ScsiTask t = new ScsiTask(itt, pdu.lun(), cdb, pdu.cmdSN(), read, write, edtl, needed, keep);
        if (immediate && tasks.size() >= queueDepth) {
            // Immediate commands bypass the CmdSN window, so the window cannot bound them: past the
            // session's depth they end at once with TASK SET FULL and take nothing.
            respond(t, ScsiResult.taskSetFull());
            t.release();
            return;
        }
        int immLen = pdu.dataSegmentLength();
        if (keep > 0) {
            t.pieces = new DataOutPieces(keep);
        }
        if (immLen > 0) {
            if (!write || !params.immediateData || immLen > edtl) {
                t.release();
                numbered(pdu, () -> reject(pdu, REJECT_PROTOCOL_ERROR));
                return;
            }
            if (pdu.dataDigestError()) {
                t.digestError = true;
            } else {
                copyIn(t, 0, pdu.data());
            }
        }
        t.unsolicitedReceived = immLen;
        long unsolicitedLimit = Math.min(edtl, params.firstBurstLength);
        t.unsolicitedDone = !write || pdu.finalBit() || params.initialR2T || immLen >= unsolicitedLimit;
        t.nextR2TOffset = immLen;
        tasks.put(itt, t);
        CommandWindow.Deliverable d = new CommandWindow.Deliverable() {
            @Override
            public void deliver() {
                if (t.aborted) {
                    return; // aborted while queued: its CmdSN is consumed, nothing runs
                }
                t.delivered = true;
                if (!immediate) {
                    window.hold(); // until answered or aborted: see CommandWindow
                    t.holdsSlot = true;
                }
                claimMemory(t);
            }

            @Override
            public void discard() {
                if (!t.aborted && tasks.remove(t.itt, t)) {
                    t.release();
                }
            }
        };
        if (immediate) {
            d.deliver();
        } else {
            window.offer(pdu.cmdSN(), d);
        }
    }

    /** Data-Out payload into the task; a payload with a bad digest poisons the task instead. */
    private static void copyIn(ScsiTask t, long offset, IscsiPdu pdu) {
        if (pdu.dataDigestError()) {
            t.digestError = true;
            return;
        }
        copyIn(t, offset, pdu.data());
    }

    /** Keeps a retained slice of the payload (no copy); bytes beyond what the command uses are dropped. */
    private static void copyIn(ScsiTask t, long offset, ByteBuf data) {
        if (t.pieces != null) {
            t.pieces.add(offset, data);
        }
    }

    private void dataOut(IscsiPdu pdu) {
        ScsiTask t = tasks.get(pdu.itt());
        int ttt = pdu.int20();
        long offset = pdu.int40() & 0xffffffffL;
        int len = pdu.dataSegmentLength();
        int dataSN = pdu.int36();
        if (t == null || !t.write || t.executing) {
            reject(pdu, REJECT_INVALID_PDU_FIELD);
            return;
        }
        if (ttt == IscsiPdu.NO_TAG) {
            // Unsolicited data: must follow the immediate data in order, within FirstBurstLength.
            if (t.unsolicitedDone || dataSN != t.unsolicitedDataSN || offset != t.unsolicitedReceived
                    || offset + len > Math.min(t.edtl, params.firstBurstLength)) {
                reject(pdu, REJECT_PROTOCOL_ERROR);
                return;
            }
            copyIn(t, offset, pdu);
            t.unsolicitedDataSN++;
            t.unsolicitedReceived += len;
            t.nextR2TOffset = t.unsolicitedReceived;
            if (pdu.finalBit()) {
                t.unsolicitedDone = true;
            }
        } else {
            ScsiTask.R2TState r = r2ts.get(ttt);
            if (r == null || r.task != t || dataSN != r.nextDataSN || offset != r.offset + r.received
                    || r.received + len > r.length) {
                reject(pdu, REJECT_PROTOCOL_ERROR);
                return;
            }
            copyIn(t, offset, pdu);
            r.nextDataSN++;
            r.received += len;
            if (pdu.finalBit()) {
                if (r.received != r.length) {
                    reject(pdu, REJECT_PROTOCOL_ERROR);
                    return;
                }
                r2ts.remove(ttt);
                t.outstandingR2T--;
            }
        }
        if (t.delivered) {
            progress(t);
        }
    }

    /**
     * Claims the task's whole transfer from the gateway's {@link DataBudget} before any R2T or device
     * read, so the sum over all sessions stays bounded; a claim that must wait moves the task on
     * when granted (on this loop), unless it was aborted or the connection closed meanwhile.
     */
    private void claimMemory(ScsiTask t) {
        long bytes = t.write ? t.bufferLength : t.read ? Math.min(t.edtl, ScsiCommandHandler.MAX_TRANSFER_BYTES) : 0;
        if (bytes == 0) {
            progress(t);
            return;
        }
        t.memory = portal.dataBudget.claim(bytes, ctx.executor(), () -> {
            if (t.memory != null && !t.aborted && !closed) {
                t.memoryGranted = true;
                progress(t);
            }
        });
        if (t.memory.grantedAtOnce()) {
            t.memoryGranted = true;
            progress(t);
        }
    }

    /** Moves a delivered task on: solicit missing data, or execute once all data is in. */
    private void progress(ScsiTask t) {
        if (!t.unsolicitedDone || !t.mayMoveData()) {
            return;
        }
        while (t.outstandingR2T < params.maxOutstandingR2T && t.nextR2TOffset < t.bufferLength) {
            int len = (int) Math.min(params.maxBurstLength, t.bufferLength - t.nextR2TOffset);
            int ttt = nextTtt++;
            if (ttt == IscsiPdu.NO_TAG) {
                ttt = nextTtt++;
            }
            r2ts.put(ttt, new ScsiTask.R2TState(t, ttt, t.nextR2TOffset, len));
            IscsiPdu r2t = response(Opcode.R2T, t.itt);
            r2t.lun(t.lun).int20(ttt).int36(t.r2tSN++).int40((int) t.nextR2TOffset).int44(len);
            ctx.writeAndFlush(r2t);
            t.nextR2TOffset += len;
            t.outstandingR2T++;
        }
        if (t.dataComplete() && !t.executing) {
            execute(t);
        }
    }

    private void execute(ScsiTask t) {
        if (t.digestError) {
            // ERL 0 cannot ask for the data again: the command ends without touching the device.
            untrack(t);
            respond(t, ScsiResult.check(Sense.PROTOCOL_CRC_ERROR));
            t.release();
            return;
        }
        ByteBufAllocator alloc = ctx.alloc();
        if (t.pieces != null) {
            try {
                t.dataOut = t.pieces.assemble(alloc);
            } catch (IllegalStateException gap) {
                // The sequence checks let a hole through: fail the command rather than write garbage.
                LOG.error("SCSI command {}: {}", t.itt, gap.getMessage());
                untrack(t);
                respond(t, ScsiResult.check(Sense.INTERNAL_TARGET_FAILURE));
                t.release();
                return;
            }
        }
        t.executing = true;
        AnswerSpin.commandStarted(); // ended in completed(), on this loop
        scsi.execute(t.lun, t.cdb, t.dataOut, t.write ? t.edtl : 0, nexus, alloc).whenComplete((result, err) -> {
            // Storage answers usually complete on this connection's own loop (StorageClient#attachTo):
            // answer at once then, rather than queue a task behind the loop's other work.
            if (ctx.executor().inEventLoop()) {
                completed(t, result, err);
                return;
            }
            try {
                ctx.executor().execute(() -> completed(t, result, err));
            } catch (java.util.concurrent.RejectedExecutionException loopGone) {
                // The gateway shut down while the device was busy: nobody to answer, free what we hold.
                if (result != null) {
                    result.dataIn().release();
                }
                t.release();
            }
        });
    }

    private void completed(ScsiTask t, ScsiResult outcome, Throwable err) {
        ScsiResult result = outcome;
        t.executing = false;
        AnswerSpin.commandEnded();
        if (err != null) {
            LOG.error("SCSI command failed unexpectedly", err);
            result = ScsiResult.check(Sense.INTERNAL_TARGET_FAILURE);
        }
        if (t.aborted || closed) {
            // Closing (logout, a fatal PDU) may precede channelInactive: the task must leave
            // the table now or channelInactive would release it a second time.
            untrack(t);
            result.dataIn().release();
            t.release();
            if (t.afterAbort != null) {
                t.afterAbort.run();
            }
            return;
        }
        untrack(t); // first: the answer carries the reopened window
        respond(t, result);
        t.release();
    }

    /**
     * The task leaves the table, and its slot in the CmdSN window if it held one: the slot reopens,
     * unless the gateway's data budget is pressed; then it stays closed until there is room again.
     */
    private void untrack(ScsiTask t) {
        tasks.remove(t.itt, t);
        if (t.holdsSlot) {
            t.holdsSlot = false;
            if (portal.dataBudget.pressed()) {
                window.withhold();
                if (!awaitingRoom) {
                    awaitingRoom = true;
                    portal.dataBudget.whenRoom(ctx.executor(), this::reopenWindow);
                }
            } else {
                window.free();
            }
        }
    }

    /** Room in the data budget again: reopens the withheld slots and tells the initiator the new MaxCmdSN. */
    private void reopenWindow() {
        awaitingRoom = false;
        if (closed || window.reopen() == 0) {
            return;
        }
        ping(); // carries the new MaxCmdSN even when no answer is due
    }

    /** Sends Data-In (with status collapsed into the last one when GOOD) or a SCSI Response. */
    private void respond(ScsiTask t, ScsiResult result) {
        ByteBuf data = result.dataIn();
        long produced = t.write ? t.needed : data.readableBytes();
        int flagsResidual = 0;
        long residual = 0;
        if (produced > t.edtl) {
            flagsResidual = 0x04; // overflow
            residual = produced - t.edtl;
        } else if (produced < t.edtl) {
            flagsResidual = 0x02; // underflow
            residual = t.edtl - produced;
        }
        int toSend = t.read ? (int) Math.min(data.readableBytes(), t.edtl) : 0;
        if (!result.isGood()) {
            toSend = 0;
            flagsResidual = t.edtl > 0 ? 0x02 : 0;
            residual = t.edtl;
        }
        int dataSN = 0;
        int mrdsl = params.initiatorMaxRecvDataSegmentLength;
        int burst = params.maxBurstLength;
        // RFC 7143 11.7.1: a Data-In sequence carries at most MaxBurstLength bytes and its last PDU has F set.
        for (int off = 0, len; off < toSend; off += len) {
            int sequenceEnd = (int) Math.min(toSend, ((long) off / burst + 1) * burst);
            len = Math.min(mrdsl, sequenceEnd - off);
            boolean last = off + len >= toSend;
            boolean status = last && result.isGood();
            IscsiPdu din = status ? statusResponse(Opcode.SCSI_DATA_IN, t.itt) : response(Opcode.SCSI_DATA_IN, t.itt);
            din.flags((off + len == sequenceEnd ? 0x80 : 0) | (status ? 0x01 | flagsResidual : 0));
            din.byteAt(3, status ? result.status() : 0);
            din.int20(IscsiPdu.NO_TAG).int36(dataSN++).int40(off).int44(status ? (int) residual : 0);
            din.data(data.retainedSlice(data.readerIndex() + off, len));
            DataBudget.Claim memory = last ? t.takeMemory() : null;
            if (memory != null) {
                // The read's bytes stay in memory until its last Data-In is written out.
                ctx.write(din).addListener(f -> memory.release());
            } else {
                ctx.write(din);
            }
            if (status) {
                data.release();
                responseFlush().soon();
                return;
            }
        }
        data.release();
        IscsiPdu rsp = statusResponse(Opcode.SCSI_RESPONSE, t.itt);
        rsp.flags(0x80 | flagsResidual).byteAt(2, 0).byteAt(3, result.status());
        rsp.int36(dataSN).int44((int) residual);
        if (result.status() == ScsiStatus.CHECK_CONDITION && result.sense() != null) {
            byte[] sense = result.sense().toFixedFormat();
            ByteBuf seg = ctx.alloc().buffer(2 + sense.length);
            seg.writeShort(sense.length).writeBytes(sense);
            rsp.data(seg);
        }
        ctx.write(rsp);
        responseFlush().soon();
    }

    /** Command answers leave once per event-loop turn: those completing together share a write. */
    private io.fastblock.protocol.codec.LoopFlush responseFlush() {
        if (responseFlush == null) {
            responseFlush = new io.fastblock.protocol.codec.LoopFlush(ctx.channel());
        }
        return responseFlush;
    }
}
