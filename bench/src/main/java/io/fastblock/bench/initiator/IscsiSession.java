package io.fastblock.bench.initiator;

import io.fastblock.gateway.iscsi.login.TextKeys;
import io.fastblock.gateway.iscsi.pdu.IscsiPdu;
import io.fastblock.gateway.iscsi.pdu.Opcode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.util.collection.IntObjectHashMap;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One iSCSI session over one connection, initiator side (RFC 7143, ErrorRecoveryLevel 0): logs in
 * (optionally with one-way CHAP), then runs many SCSI commands at once, sending a command only while
 * its CmdSN is inside the target's window, writing immediate and unsolicited data and answering
 * R2Ts, reassembling Data-In, answering the target's NOP-In pings, and finally logging out.
 *
 * <p>All state lives on the channel's event loop; the public methods may be called from any thread
 * and their futures complete on the event loop (so a caller that issues its next command from the
 * completion never leaves it).
 */
public final class IscsiSession extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(IscsiSession.class);
    private static final int LOGIN_ROUND_TRIPS = 16;
    private static final int FIRST_CMD_SN = 1;

    private enum Phase { SECURITY, OPERATIONAL, FULL_FEATURE, LOGGING_OUT, CLOSED }

    private enum LoginStep { FIRST, CHAP_ALGORITHM, CHAP_RESPONSE, OPERATIONAL }

    /** One outstanding SCSI command. */
    private static final class Task {
        int itt;
        final boolean read;
        final boolean write;
        final int edtl;
        final Consumer<ByteBuf> cdb;
        final ByteBuf out;
        final ByteBuf in;
        final int inBase;
        final CompletableFuture<Integer> done = new CompletableFuture<>();
        WritePlan plan;
        DataInTracker tracker;

        Task(boolean read, boolean write, int edtl, Consumer<ByteBuf> cdb, ByteBuf out, ByteBuf in) {
            this.read = read;
            this.write = write;
            this.edtl = edtl;
            this.cdb = cdb;
            this.out = out;
            this.in = in;
            this.inBase = in == null ? 0 : in.writerIndex();
        }
    }

    private final IscsiUrl url;
    private final String initiatorName;
    private final CompletableFuture<IscsiSession> loggedIn = new CompletableFuture<>();
    private final CompletableFuture<Void> loggedOut = new CompletableFuture<>();
    private final IntObjectHashMap<Task> tasks = new IntObjectHashMap<>();
    private final ArrayDeque<Task> waiting = new ArrayDeque<>();
    private final byte[] isid = new byte[6];
    private final Map<String, String> operationalAnswers = new HashMap<>();

    private Channel channel;
    private ByteBufAllocator alloc;
    private Phase phase = Phase.SECURITY;
    private LoginStep step = LoginStep.FIRST;
    private int loginRoundTrips;
    private ByteBuf continuedText;
    private int loginItt;
    private int nextItt = 1;
    private int expStatSN;
    private int tsih;
    private CmdSnWindow window;
    private SessionParams params;
    private long commandsSent;
    private long r2tsAnswered;
    private long windowStalls;

    public IscsiSession(IscsiUrl url, String initiatorName) {
        this.url = url;
        this.initiatorName = initiatorName;
        ThreadLocalRandom.current().nextBytes(isid);
        isid[0] = (byte) 0x80; // ISID type "random" (RFC 7143 section 11.12.5)
    }

    // ---------------------------------------------------------------- public API

    /** Completes when the session reaches full feature phase, or fails with a {@link LoginException}. */
    public CompletableFuture<IscsiSession> loggedIn() {
        return loggedIn;
    }

    public IscsiUrl url() {
        return url;
    }

    /** The negotiated parameters; valid once logged in. */
    public SessionParams params() {
        return params;
    }

    public EventLoop eventLoop() {
        return channel.eventLoop();
    }

    /** Target's TSIH for this session. */
    public int tsih() {
        return tsih;
    }

    /** SCSI commands sent so far, R2Ts answered, and times a command had to wait for the CmdSN window. */
    public long commandsSent() {
        return commandsSent;
    }

    public long r2tsAnswered() {
        return r2tsAnswered;
    }

    public long windowStalls() {
        return windowStalls;
    }

    /**
     * Reads {@code blocks} blocks at {@code lba} into {@code dst} (from its writer index, which is
     * advanced by the bytes received), or discards the data when {@code dst} is null. Completes with
     * the byte count received.
     */
    public CompletableFuture<Integer> read(long lba, int blocks, int blockSize, ByteBuf dst) {
        int edtl = Math.multiplyExact(blocks, blockSize);
        if (dst != null && dst.writableBytes() < edtl) {
            throw new IllegalArgumentException("destination has room for " + dst.writableBytes() + " bytes, need " + edtl);
        }
        return submit(true, false, edtl, bhs -> Cdb.readWrite(bhs, false, lba, blocks), null, dst);
    }

    /**
     * Writes the readable bytes of {@code data} ({@code blocks} blocks) at {@code lba}. The session
     * holds its own reference to {@code data} until the command completes; the caller keeps theirs.
     */
    public CompletableFuture<Integer> write(long lba, int blocks, ByteBuf data) {
        return submit(false, true, data.readableBytes(), bhs -> Cdb.readWrite(bhs, true, lba, blocks), data, null);
    }

    /** Volume geometry from READ CAPACITY(16). */
    public record Capacity(long blocks, int blockSize) {
        public long bytes() {
            return blocks * blockSize;
        }
    }

    /**
     * READ CAPACITY(16), asked again (up to 5 times) while the target reports a unit attention, as it
     * does for the first command after login (power on / reset occurred).
     */
    public CompletableFuture<Capacity> readCapacity() {
        return readCapacity(5);
    }

    private CompletableFuture<Capacity> readCapacity(int attempts) {
        return readCapacityOnce().handle((cap, err) -> {
            Throwable c = err instanceof java.util.concurrent.CompletionException ? err.getCause() : err;
            if (c != null && c.getCause() instanceof ScsiCommandException s && s.senseKey() == 6 && attempts > 1) {
                return readCapacity(attempts - 1);
            }
            return err != null ? CompletableFuture.<Capacity>failedFuture(c) : CompletableFuture.completedFuture(cap);
        }).thenCompose(f -> f);
    }

    private CompletableFuture<Capacity> readCapacityOnce() {
        ByteBuf buf = alloc.heapBuffer(32);
        return submit(true, false, 32, bhs -> Cdb.readCapacity16(bhs, 32), null, buf).handle((n, err) -> {
            try {
                if (err != null) {
                    throw new IllegalStateException("READ CAPACITY(16) failed: " + err.getMessage(), err);
                }
                if (n < 12) {
                    throw new IllegalStateException("READ CAPACITY(16) returned " + n + " bytes");
                }
                return new Capacity(buf.getLong(0) + 1, buf.getInt(8));
            } finally {
                buf.release();
            }
        });
    }

    /** Logs out (reason: close the session) and closes the connection; bounded by {@code timeoutMillis}. */
    public CompletableFuture<Void> logout(long timeoutMillis) {
        inLoop(() -> {
            if (phase != Phase.FULL_FEATURE) {
                channel.close();
                return;
            }
            phase = Phase.LOGGING_OUT;
            IscsiPdu pdu = IscsiPdu.create(alloc, Opcode.LOGOUT_REQUEST).immediate(true);
            pdu.flags(0x80); // reason 0: close the session
            pdu.itt(allocateItt()).int24(window.current()).int28(expStatSN);
            channel.writeAndFlush(pdu);
            channel.eventLoop().schedule(() -> {
                if (!loggedOut.isDone()) {
                    LOG.warn("{}: no Logout Response within {} ms, closing", url, timeoutMillis);
                    channel.close();
                }
            }, timeoutMillis, TimeUnit.MILLISECONDS);
        });
        return loggedOut;
    }

    /** Closes the connection at once; outstanding commands fail. */
    public CompletableFuture<Void> close() {
        if (channel != null) {
            channel.close();
        }
        return loggedOut;
    }

    // ---------------------------------------------------------------- commands

    private void inLoop(Runnable r) {
        if (channel.eventLoop().inEventLoop()) {
            r.run();
        } else {
            channel.eventLoop().execute(r);
        }
    }

    private CompletableFuture<Integer> submit(boolean read, boolean write, int edtl, Consumer<ByteBuf> cdb,
                                              ByteBuf out, ByteBuf in) {
        if (out != null) {
            out.retain();
        }
        Task t = new Task(read, write, edtl, cdb, out, in);
        inLoop(() -> enqueue(t));
        return t.done;
    }

    private void enqueue(Task t) {
        if (phase != Phase.FULL_FEATURE) {
            finish(t, new IOException("session " + url + " is not in full feature phase (" + phase + ")"));
            return;
        }
        if (!waiting.isEmpty() || !window.open()) {
            windowStalls++;
            waiting.add(t);
            return;
        }
        send(t);
    }

    private int allocateItt() {
        int itt;
        do {
            itt = nextItt++;
        } while (itt == IscsiPdu.NO_TAG || itt == loginItt || tasks.containsKey(itt));
        return itt;
    }

    private void send(Task t) {
        t.itt = allocateItt();
        tasks.put(t.itt, t);
        commandsSent++;
        IscsiPdu cmd = IscsiPdu.create(alloc, Opcode.SCSI_COMMAND);
        int flags = (t.read ? 0x40 : 0) | (t.write ? 0x20 : 0) | 1; // ATTR simple
        cmd.lun(Cdb.lunField(url.lun())).itt(t.itt).int20(t.edtl).int24(window.take()).int28(expStatSN);
        t.cdb.accept(cmd.bhs());
        int unsolicitedEnd = 0;
        if (t.write) {
            t.plan = new WritePlan(t.edtl, params);
            int imm = t.plan.immediateLength();
            if (imm > 0) {
                cmd.data(t.out.retainedSlice(t.out.readerIndex(), imm));
            }
            unsolicitedEnd = t.plan.unsolicitedEnd();
            // F=1 unless unsolicited Data-Out PDUs follow the command
            cmd.flags(flags | (unsolicitedEnd > imm ? 0 : 0x80));
            channel.write(cmd);
            if (unsolicitedEnd > imm) {
                sendDataOut(t, IscsiPdu.NO_TAG, imm, unsolicitedEnd - imm);
            }
        } else {
            if (t.read) {
                t.tracker = new DataInTracker(t.edtl);
            }
            cmd.flags(flags | 0x80);
            channel.write(cmd);
        }
        channel.flush();
    }

    private void sendDataOut(Task t, int ttt, int offset, int length) {
        int n = t.plan.pduCount(length);
        int sent = 0;
        for (int i = 0; i < n; i++) {
            int len = t.plan.pduLength(length, i);
            IscsiPdu d = IscsiPdu.create(alloc, Opcode.SCSI_DATA_OUT);
            d.flags(i == n - 1 ? 0x80 : 0).lun(Cdb.lunField(url.lun())).itt(t.itt).int20(ttt).int28(expStatSN)
                    .int36(i).int40(offset + sent);
            d.data(t.out.retainedSlice(t.out.readerIndex() + offset + sent, len));
            channel.write(d);
            sent += len;
        }
    }

    private void drainWaiting() {
        while (!waiting.isEmpty() && window.open() && phase == Phase.FULL_FEATURE) {
            send(waiting.poll());
        }
    }

    private void finish(Task t, Throwable err) {
        if (t.out != null) {
            t.out.release();
        }
        t.done.completeExceptionally(err);
    }

    private void complete(Task t, int status, int residualFlags, int residual, ByteBuf senseData) {
        tasks.remove(t.itt);
        if (t.out != null) {
            t.out.release();
        }
        if (status != 0) {
            int key = -1;
            int asc = -1;
            int ascq = -1;
            if (senseData != null && senseData.readableBytes() >= 2) {
                int len = senseData.getUnsignedShort(senseData.readerIndex());
                int s = senseData.readerIndex() + 2;
                if (len >= 14 && senseData.readableBytes() >= 2 + 14) {
                    int code = senseData.getByte(s) & 0x7f;
                    if (code == 0x72 || code == 0x73) {
                        key = senseData.getByte(s + 1) & 0x0f;
                        asc = senseData.getByte(s + 2) & 0xff;
                        ascq = senseData.getByte(s + 3) & 0xff;
                    } else {
                        key = senseData.getByte(s + 2) & 0x0f;
                        asc = senseData.getByte(s + 12) & 0xff;
                        ascq = senseData.getByte(s + 13) & 0xff;
                    }
                }
            }
            t.done.completeExceptionally(new ScsiCommandException(String.format(
                    "SCSI status 0x%02x sense %x/%02x/%02x from %s", status, key, asc, ascq, url),
                    status, key, asc, ascq));
            return;
        }
        int transferred = t.edtl;
        if ((residualFlags & 0x02) != 0) {
            transferred = t.edtl - residual;
        }
        if (t.in != null && t.tracker != null) {
            t.in.writerIndex(t.inBase + t.tracker.received());
        }
        t.done.complete(transferred);
    }

    // ---------------------------------------------------------------- inbound

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        channel = ctx.channel();
        alloc = ctx.alloc();
        loginItt = ThreadLocalRandom.current().nextInt(1 << 30, Integer.MAX_VALUE);
        List<Map.Entry<String, String>> keys = new ArrayList<>();
        keys.add(Map.entry("InitiatorName", initiatorName));
        keys.add(Map.entry("SessionType", "Normal"));
        keys.add(Map.entry("TargetName", url.target()));
        keys.add(Map.entry("AuthMethod", url.chap() ? "CHAP" : "None"));
        // without authentication, ask to move on at once
        sendLogin(0, 1, !url.chap(), keys);
        ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        IscsiPdu pdu = (IscsiPdu) msg;
        try {
            onPdu(pdu);
        } catch (ProtocolViolation e) {
            fail(e.getMessage());
        } finally {
            pdu.release();
        }
    }

    /** The target broke the protocol; the session cannot continue (ERL 0). */
    static final class ProtocolViolation extends RuntimeException {
        private static final long serialVersionUID = 1L;

        ProtocolViolation(String message) {
            super(message);
        }
    }

    private void onPdu(IscsiPdu pdu) {
        int op = pdu.opcode();
        if (op == Opcode.LOGIN_RESPONSE) {
            onLoginResponse(pdu);
            return;
        }
        if (phase != Phase.FULL_FEATURE && phase != Phase.LOGGING_OUT) {
            throw new ProtocolViolation(String.format("opcode 0x%02x during login", op));
        }
        window.update(pdu.int28(), pdu.int32());
        switch (op) {
            case Opcode.SCSI_DATA_IN -> onDataIn(pdu);
            case Opcode.SCSI_RESPONSE -> onResponse(pdu);
            case Opcode.R2T -> onR2T(pdu);
            case Opcode.NOP_IN -> onNopIn(pdu);
            case Opcode.REJECT -> onReject(pdu);
            case Opcode.ASYNC_MESSAGE -> onAsync(pdu);
            case Opcode.LOGOUT_RESPONSE -> {
                statSN(pdu.int24());
                loggedOut.complete(null);
                channel.close();
            }
            default -> throw new ProtocolViolation(String.format("unexpected opcode 0x%02x", op));
        }
        drainWaiting();
    }

    private void statSN(int statSN) {
        if (!CmdSnWindow.lessThan(statSN + 1, expStatSN)) {
            expStatSN = statSN + 1;
        }
    }

    private Task task(IscsiPdu pdu, String what) {
        Task t = tasks.get(pdu.itt());
        if (t == null) {
            throw new ProtocolViolation(String.format("%s for unknown ITT 0x%08x", what, pdu.itt()));
        }
        return t;
    }

    private void onDataIn(IscsiPdu pdu) {
        Task t = task(pdu, "Data-In");
        if (t.tracker == null) {
            throw new ProtocolViolation("Data-In for a command that reads nothing (ITT " + t.itt + ")");
        }
        int len = pdu.dataSegmentLength();
        String err = t.tracker.accept(pdu.int36(), pdu.int40(), len);
        if (err != null) {
            throw new ProtocolViolation(err);
        }
        if (t.in != null && len > 0) {
            t.in.setBytes(t.inBase + pdu.int40(), pdu.data(), pdu.data().readerIndex(), len);
        }
        int flags = pdu.flags();
        if ((flags & 0x01) != 0) { // S: status collapsed into the last Data-In
            if ((flags & 0x80) == 0) {
                throw new ProtocolViolation("Data-In with S but without F");
            }
            statSN(pdu.int24());
            complete(t, pdu.byteAt(3), flags, pdu.int44(), null);
        }
    }

    private void onResponse(IscsiPdu pdu) {
        Task t = task(pdu, "SCSI Response");
        statSN(pdu.int24());
        int response = pdu.byteAt(2);
        if (response != 0) {
            tasks.remove(t.itt);
            finish(t, new ScsiCommandException("iSCSI response 0x" + Integer.toHexString(response)
                    + " (target failure) from " + url, -1, -1, -1, -1));
            return;
        }
        complete(t, pdu.byteAt(3), pdu.flags(), pdu.int44(), pdu.data());
    }

    private void onR2T(IscsiPdu pdu) {
        Task t = task(pdu, "R2T");
        if (!t.write) {
            throw new ProtocolViolation("R2T for a command that writes nothing (ITT " + t.itt + ")");
        }
        int ttt = pdu.int20();
        if (ttt == IscsiPdu.NO_TAG) {
            throw new ProtocolViolation("R2T with the reserved TTT 0xffffffff");
        }
        String err = t.plan.checkR2T(pdu.int40(), pdu.int44());
        if (err != null) {
            throw new ProtocolViolation(err);
        }
        r2tsAnswered++;
        sendDataOut(t, ttt, pdu.int40(), pdu.int44());
        channel.flush();
    }

    private void onNopIn(IscsiPdu pdu) {
        if (pdu.itt() != IscsiPdu.NO_TAG) {
            statSN(pdu.int24()); // the answer to a ping of ours (we send none) advances StatSN
            return;
        }
        if (pdu.int20() == IscsiPdu.NO_TAG) {
            return; // an unsolicited NOP-In that wants no answer
        }
        // The target pings: answer with its TTT, as an immediate NOP-Out that does not take a CmdSN.
        IscsiPdu out = IscsiPdu.create(alloc, Opcode.NOP_OUT).immediate(true);
        out.lun(pdu.lun()).itt(IscsiPdu.NO_TAG).int20(pdu.int20()).int24(window.current()).int28(expStatSN);
        channel.writeAndFlush(out);
    }

    private void onReject(IscsiPdu pdu) {
        int reason = pdu.byteAt(2);
        ByteBuf header = pdu.data();
        if (header.readableBytes() < IscsiPdu.BHS_LENGTH) {
            throw new ProtocolViolation("Reject 0x" + Integer.toHexString(reason) + " without the rejected header");
        }
        int rejectedItt = header.getInt(header.readerIndex() + 16);
        int rejectedOp = header.getByte(header.readerIndex()) & 0x3f;
        Task t = tasks.remove(rejectedItt);
        String msg = String.format("target rejected opcode 0x%02x ITT 0x%08x with reason 0x%02x", rejectedOp,
                rejectedItt, reason);
        if (t == null) {
            throw new ProtocolViolation(msg + " (no such command outstanding)");
        }
        LOG.warn("{}: {}", url, msg);
        finish(t, new ScsiCommandException(msg, -1, -1, -1, -1));
    }

    private void onAsync(IscsiPdu pdu) {
        int event = pdu.byteAt(36);
        if (event == 1) {
            LOG.info("{}: target asks us to log out", url);
            logout(5000);
        } else if (event == 2 || event == 3) {
            LOG.warn("{}: target will drop the connection (async event {})", url, event);
        }
    }

    // ---------------------------------------------------------------- login

    private void sendLogin(int csg, int nsg, boolean transit, List<Map.Entry<String, String>> keys) {
        if (++loginRoundTrips > LOGIN_ROUND_TRIPS) {
            throw new ProtocolViolation("login did not finish in " + LOGIN_ROUND_TRIPS + " round trips");
        }
        IscsiPdu pdu = IscsiPdu.create(alloc, Opcode.LOGIN_REQUEST).immediate(true);
        pdu.flags((transit ? 0x80 : 0) | (csg << 2) | (transit ? nsg : 0));
        pdu.bhs().setBytes(8, isid);
        pdu.bhs().setShort(14, 0);
        pdu.itt(loginItt).int20(0).int24(FIRST_CMD_SN).int28(expStatSN);
        if (!keys.isEmpty()) {
            pdu.data(TextKeys.encode(alloc, keys));
        }
        channel.writeAndFlush(pdu);
    }

    private void onLoginResponse(IscsiPdu pdu) {
        if (phase != Phase.SECURITY && phase != Phase.OPERATIONAL) {
            throw new ProtocolViolation("Login Response in phase " + phase);
        }
        int statusClass = pdu.byteAt(36);
        int statusDetail = pdu.byteAt(37);
        if (statusClass != 0) {
            String text = String.format("login to %s refused: status 0x%02x%02x (%s)", url, statusClass, statusDetail,
                    loginStatusText(statusClass, statusDetail));
            loggedIn.completeExceptionally(new LoginException(text, statusClass, statusDetail));
            channel.close();
            return;
        }
        expStatSN = pdu.int24() + 1;
        int flags = pdu.flags();
        int csg = (flags >> 2) & 3;
        if (csg != (phase == Phase.SECURITY ? 0 : 1)) {
            throw new ProtocolViolation("Login Response with CSG " + csg + " in phase " + phase);
        }
        if ((flags & 0x40) != 0) { // C: more text follows; ask for it with an empty request
            if (continuedText == null) {
                continuedText = alloc.heapBuffer();
            }
            continuedText.writeBytes(pdu.data(), pdu.data().readerIndex(), pdu.dataSegmentLength());
            sendLogin(csg, 0, false, List.of());
            return;
        }
        Map<String, String> keys;
        try {
            if (continuedText != null) {
                continuedText.writeBytes(pdu.data(), pdu.data().readerIndex(), pdu.dataSegmentLength());
                keys = TextKeys.parse(continuedText);
                continuedText.release();
                continuedText = null;
            } else {
                keys = TextKeys.parse(pdu.data());
            }
        } catch (TextKeys.MalformedKeysException e) {
            throw new ProtocolViolation("malformed login keys: " + e.getMessage());
        }
        boolean transit = (flags & 0x80) != 0;
        int nsg = flags & 3;
        switch (step) {
            case FIRST -> {
                if (transit && nsg == 1) {
                    startOperational();
                } else if (url.chap() && "CHAP".equals(keys.get("AuthMethod"))) {
                    step = LoginStep.CHAP_ALGORITHM;
                    sendLogin(0, 1, false, List.of(Map.entry("CHAP_A", ChapResponder.OFFERED_ALGORITHMS)));
                } else if ("CHAP".equals(keys.get("AuthMethod"))) {
                    loginFailed("target " + url.target() + " requires CHAP: give user%secret in the URL");
                } else {
                    loginFailed("target did not let us leave the security stage (AuthMethod="
                            + keys.get("AuthMethod") + ")");
                }
            }
            case CHAP_ALGORITHM -> {
                String a = keys.get("CHAP_A");
                String i = keys.get("CHAP_I");
                String c = keys.get("CHAP_C");
                if (a == null || i == null || c == null) {
                    loginFailed("target sent no CHAP challenge (CHAP_A/CHAP_I/CHAP_C), got " + keys.keySet());
                    return;
                }
                String r;
                try {
                    r = ChapResponder.response(a, i, c, url.secret());
                } catch (IllegalArgumentException e) {
                    loginFailed(e.getMessage());
                    return;
                }
                step = LoginStep.CHAP_RESPONSE;
                sendLogin(0, 1, true, List.of(Map.entry("CHAP_N", url.user()), Map.entry("CHAP_R", r)));
            }
            case CHAP_RESPONSE -> {
                if (transit && nsg == 1) {
                    startOperational();
                } else {
                    sendLogin(0, 1, true, List.of());
                }
            }
            case OPERATIONAL -> {
                operationalAnswers.putAll(keys);
                if (transit && nsg == 3) {
                    enterFullFeature(pdu);
                } else {
                    sendLogin(1, 3, true, List.of());
                }
            }
            default -> throw new IllegalStateException(step.toString());
        }
    }

    private void startOperational() {
        phase = Phase.OPERATIONAL;
        step = LoginStep.OPERATIONAL;
        sendLogin(1, 3, true, OperationalKeys.offer());
    }

    private void enterFullFeature(IscsiPdu pdu) {
        try {
            params = OperationalKeys.resolve(operationalAnswers);
        } catch (IllegalArgumentException e) {
            loginFailed("unusable negotiation result: " + e.getMessage());
            return;
        }
        tsih = pdu.bhs().getUnsignedShort(14);
        window = new CmdSnWindow(FIRST_CMD_SN, pdu.int28(), pdu.int32());
        phase = Phase.FULL_FEATURE;
        LOG.debug("{}: logged in, {} {}", url, params, window);
        loggedIn.complete(this);
    }

    private void loginFailed(String why) {
        loggedIn.completeExceptionally(new LoginException(why, -1, -1));
        channel.close();
    }

    static String loginStatusText(int cls, int detail) {
        int s = (cls << 8) | detail;
        return switch (s) {
            case 0x0101 -> "target moved temporarily";
            case 0x0102 -> "target moved permanently";
            case 0x0200 -> "initiator error";
            case 0x0201 -> "authentication failure";
            case 0x0202 -> "authorization failure";
            case 0x0203 -> "target not found";
            case 0x0204 -> "target removed";
            case 0x0205 -> "unsupported version";
            case 0x0206 -> "too many connections";
            case 0x0207 -> "missing parameter";
            case 0x0208 -> "can't include in session";
            case 0x0209 -> "session type not supported";
            case 0x020a -> "session does not exist";
            case 0x020b -> "invalid request during login";
            case 0x0300 -> "target error";
            case 0x0301 -> "service unavailable";
            case 0x0302 -> "out of resources";
            default -> "unknown";
        };
    }

    // ---------------------------------------------------------------- teardown

    private void fail(String why) {
        LOG.warn("{}: {}; closing the connection", url, why);
        if (!loggedIn.isDone()) {
            loggedIn.completeExceptionally(new LoginException(why, -1, -1));
        }
        failAll(new IOException(why));
        channel.close();
    }

    private void failAll(Throwable err) {
        List<Task> all = new ArrayList<>(tasks.values());
        tasks.clear();
        all.addAll(waiting);
        waiting.clear();
        for (Task t : all) {
            finish(t, err);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        Phase was = phase;
        phase = Phase.CLOSED;
        if (continuedText != null) {
            continuedText.release();
            continuedText = null;
        }
        IOException closed = new IOException("connection to " + url + " closed" + (was == Phase.LOGGING_OUT
                ? " during logout" : ""));
        if (!loggedIn.isDone()) {
            loggedIn.completeExceptionally(new LoginException("connection closed during login to " + url, -1, -1));
        }
        failAll(closed);
        loggedOut.complete(null);
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        fail(cause.toString());
    }

    @Override
    public String toString() {
        return "IscsiSession[" + url + " " + phase + " " + window + " outstanding=" + tasks.size() + " waiting="
                + waiting.size() + "]";
    }
}
