package io.fastblock.bench.initiator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.gateway.iscsi.login.TextKeys;
import io.fastblock.gateway.iscsi.pdu.IscsiPdu;
import io.fastblock.gateway.iscsi.pdu.Opcode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The session's protocol logic driven PDU by PDU through an {@link EmbeddedChannel}: the test plays
 * the target and checks every PDU the initiator sends.
 */
class IscsiSessionTest {
    static final ByteBufAllocator ALLOC = ByteBufAllocator.DEFAULT;
    final List<IscsiPdu> toRelease = new ArrayList<>();
    EmbeddedChannel ch;
    IscsiSession session;
    int statSN = 100;

    @AfterEach
    void release() {
        toRelease.forEach(IscsiPdu::release);
        if (ch != null) {
            ch.finishAndReleaseAll();
        }
    }

    /** Releases the PDUs read so far (the wire would have, after writing them). */
    void releaseSent() {
        toRelease.forEach(IscsiPdu::release);
        toRelease.clear();
    }

    IscsiPdu sent() {
        IscsiPdu p = ch.readOutbound();
        if (p != null) {
            toRelease.add(p);
        }
        return p;
    }

    static IscsiPdu targetPdu(int opcode, int flags) {
        IscsiPdu p = IscsiPdu.create(ALLOC, opcode);
        p.flags(flags);
        return p;
    }

    Map<String, String> keys(IscsiPdu p) throws Exception {
        return TextKeys.parse(p.data().duplicate());
    }

    void loginResponse(IscsiPdu req, int flags, Map<String, String> keys, int expCmdSN, int maxCmdSN) {
        IscsiPdu r = targetPdu(Opcode.LOGIN_RESPONSE, flags);
        r.bhs().setBytes(8, req.bhs(), 8, 6);
        r.itt(req.itt()).sequence(statSN++, expCmdSN, maxCmdSN);
        if (flags == 0x87) {
            r.bhs().setShort(14, 7);
        }
        r.data(TextKeys.encode(ALLOC, new ArrayList<>(keys.entrySet())));
        ch.writeInbound(r);
    }

    /** Logs in with the answers {@code answers} and a window of {@code depth} commands. */
    void login(String url, Map<String, String> answers, int depth) throws Exception {
        session = new IscsiSession(IscsiUrl.parse(url), "iqn.test:init");
        ch = new EmbeddedChannel(session);
        IscsiPdu first = sent();
        assertEquals(Opcode.LOGIN_REQUEST, first.opcode());
        assertTrue(first.immediate());
        assertEquals(0x81, first.flags(), "T=1 CSG=0 NSG=1 without CHAP");
        Map<String, String> k = keys(first);
        assertEquals("iqn.test:init", k.get("InitiatorName"));
        assertEquals("iqn.t:x", k.get("TargetName"));
        assertEquals("None", k.get("AuthMethod"));
        assertEquals(0x80, first.byteAt(8) & 0xc0, "random ISID type");
        loginResponse(first, 0x81, Map.of("AuthMethod", "None", "TargetPortalGroupTag", "1"), 1, 1);
        IscsiPdu op = sent();
        assertEquals(0x87, op.flags(), "T=1 CSG=1 NSG=3");
        Map<String, String> offer = keys(op);
        assertEquals("No", offer.get("InitialR2T"));
        assertEquals("Yes", offer.get("ImmediateData"));
        assertEquals("262144", offer.get("MaxRecvDataSegmentLength"));
        assertEquals("262144", offer.get("FirstBurstLength"));
        assertEquals("1048576", offer.get("MaxBurstLength"));
        assertEquals(101, op.expStatSN());
        loginResponse(op, 0x87, answers, 1, depth);
        assertTrue(session.loggedIn().isDone());
        assertEquals(7, session.tsih());
    }

    static final Map<String, String> TGT_LIKE = Map.of("InitialR2T", "Yes", "ImmediateData", "Yes",
            "FirstBurstLength", "65536", "MaxBurstLength", "262144", "MaxRecvDataSegmentLength", "8192");
    static final Map<String, String> FAST = Map.of("InitialR2T", "No", "ImmediateData", "Yes",
            "FirstBurstLength", "262144", "MaxBurstLength", "1048576", "MaxRecvDataSegmentLength", "262144");

    void respond(IscsiPdu cmd, int status, int expCmdSN, int maxCmdSN) {
        IscsiPdu r = targetPdu(Opcode.SCSI_RESPONSE, 0x80);
        r.itt(cmd.itt()).sequence(statSN++, expCmdSN, maxCmdSN).byteAt(3, status);
        ch.writeInbound(r);
    }

    @Test
    void commandsBeyondMaxCmdSnWaitUntilTheWindowOpens() throws Exception {
        login("iscsi://127.0.0.1/iqn.t:x/0", FAST, 2); // window: CmdSN 1 and 2
        ByteBuf data = Unpooled.buffer(4096).writeZero(4096);
        List<CompletableFuture<Integer>> writes = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            writes.add(session.write(i * 8, 8, data));
        }
        ch.runPendingTasks();
        IscsiPdu c1 = sent();
        IscsiPdu c2 = sent();
        assertNull(sent(), "a third command would exceed MaxCmdSN");
        assertEquals(1, c1.cmdSN());
        assertEquals(2, c2.cmdSN());
        assertEquals(0xa1, c1.flags(), "F, W, simple; no Data-Out follows");
        assertEquals(4096, c1.dataSegmentLength(), "all of it as immediate data");
        assertEquals(0x2a, c1.byteAt(32), "WRITE(10)");
        assertEquals(3, session.windowStalls());
        respond(c1, 0, 2, 2); // completes CmdSN 1 but keeps MaxCmdSN at 2: still nothing may go
        assertEquals(4096, writes.get(0).get());
        assertNull(sent());
        respond(c2, 0, 3, 5); // opens 3..5
        IscsiPdu c3 = sent();
        IscsiPdu c4 = sent();
        IscsiPdu c5 = sent();
        assertEquals(List.of(3, 4, 5), List.of(c3.cmdSN(), c4.cmdSN(), c5.cmdSN()));
        assertEquals(statSN, c5.expStatSN());
        assertNull(sent());
        respond(c3, 0, 4, 10);
        respond(c4, 0, 5, 10);
        respond(c5, 0, 6, 10);
        for (CompletableFuture<Integer> w : writes) {
            assertEquals(4096, w.get());
        }
        releaseSent();
        assertEquals(1, data.refCnt(), "the session released its references to the data");
        data.release();
    }

    @Test
    void largeWriteSendsImmediateDataThenAnswersEachR2T() throws Exception {
        login("iscsi://127.0.0.1/iqn.t:x/0", TGT_LIKE, 32);
        int len = 64 * 1024 + 4096;
        ByteBuf data = Unpooled.buffer(len);
        for (int i = 0; i < len; i++) {
            data.writeByte(i * 7);
        }
        CompletableFuture<Integer> w = session.write(1000, len / 512, data);
        ch.runPendingTasks();
        IscsiPdu cmd = sent();
        assertEquals(0xa1, cmd.flags(), "InitialR2T=Yes: no unsolicited Data-Out, so F=1");
        assertEquals(8192, cmd.dataSegmentLength(), "immediate data limited by the target's 8 KiB segments");
        assertEquals(len, cmd.int20());
        assertNull(sent());
        // the target asks for the rest in two R2Ts
        int[][] r2ts = {{8192, 32768}, {40960, len - 40960}};
        int ttt = 0x55;
        for (int[] r2t : r2ts) {
            IscsiPdu r = targetPdu(Opcode.R2T, 0x80);
            r.itt(cmd.itt()).int20(ttt).sequence(statSN, 2, 33).int40(r2t[0]).int44(r2t[1]);
            ch.writeInbound(r);
            int off = r2t[0];
            int dataSN = 0;
            while (off < r2t[0] + r2t[1]) {
                IscsiPdu d = sent();
                assertEquals(Opcode.SCSI_DATA_OUT, d.opcode());
                assertEquals(ttt, d.int20());
                assertEquals(dataSN++, d.int36());
                assertEquals(off, d.int40());
                assertTrue(d.dataSegmentLength() <= 8192);
                assertEquals(data.getByte(off), d.data().getByte(d.data().readerIndex()));
                off += d.dataSegmentLength();
                assertEquals(off == r2t[0] + r2t[1], d.finalBit());
            }
            ttt++;
        }
        assertNull(sent());
        assertEquals(2, session.r2tsAnswered());
        respond(cmd, 0, 2, 33);
        assertEquals(len, w.get());
    }

    @Test
    void unsolicitedDataOutFollowsTheCommandWhenInitialR2TIsNo() throws Exception {
        login("iscsi://127.0.0.1/iqn.t:x/0", Map.of("InitialR2T", "No", "ImmediateData", "Yes",
                "FirstBurstLength", "65536", "MaxBurstLength", "262144", "MaxRecvDataSegmentLength", "16384"), 32);
        ByteBuf data = Unpooled.buffer(131072).writeZero(131072);
        CompletableFuture<Integer> w = session.write(0, 256, data);
        ch.runPendingTasks();
        IscsiPdu cmd = sent();
        assertEquals(0x21, cmd.flags(), "F=0: unsolicited Data-Out follows");
        assertEquals(16384, cmd.dataSegmentLength());
        for (int i = 0; i < 3; i++) {
            IscsiPdu d = sent();
            assertEquals(IscsiPdu.NO_TAG, d.int20(), "unsolicited Data-Out carries TTT 0xffffffff");
            assertEquals(i, d.int36());
            assertEquals(16384 * (i + 1), d.int40());
            assertEquals(i == 2, d.finalBit());
        }
        assertNull(sent(), "the first burst ends at 64 KiB");
        IscsiPdu r = targetPdu(Opcode.R2T, 0x80);
        r.itt(cmd.itt()).int20(9).sequence(statSN, 2, 33).int40(65536).int44(65536);
        ch.writeInbound(r);
        for (int i = 0; i < 4; i++) {
            assertEquals(65536 + 16384 * i, sent().int40());
        }
        respond(cmd, 0, 2, 33);
        assertEquals(131072, w.get());
    }

    @Test
    void dataInIsReassembledAndStatusMayComeWithTheLastPdu() throws Exception {
        login("iscsi://127.0.0.1/iqn.t:x/0", FAST, 32);
        ByteBuf dst = Unpooled.buffer(16384);
        CompletableFuture<Integer> r = session.read(1L << 33, 32, 512, dst); // beyond 2^32 blocks: READ(16)
        ch.runPendingTasks();
        IscsiPdu cmd = sent();
        assertEquals(0xc1, cmd.flags(), "F, R, simple");
        assertEquals(0x88, cmd.byteAt(32));
        assertEquals(1L << 33, cmd.bhs().getLong(34));
        for (int i = 0; i < 2; i++) {
            IscsiPdu d = targetPdu(Opcode.SCSI_DATA_IN, i == 1 ? 0x81 : 0);
            d.itt(cmd.itt()).int20(IscsiPdu.NO_TAG).sequence(statSN, 2, 33).int36(i).int40(i * 8192);
            d.data(Unpooled.buffer(8192).writeZero(8192).setByte(0, 0x40 + i));
            ch.writeInbound(d);
        }
        statSN++;
        assertEquals(16384, r.get());
        assertEquals(16384, dst.readableBytes());
        assertEquals(0x40, dst.getByte(0));
        assertEquals(0x41, dst.getByte(8192));
    }

    @Test
    void checkConditionFailsTheCommandWithItsSense() throws Exception {
        login("iscsi://127.0.0.1/iqn.t:x/0", FAST, 32);
        CompletableFuture<Integer> r = session.read(1 << 30, 8, 512, null);
        ch.runPendingTasks();
        IscsiPdu cmd = sent();
        IscsiPdu resp = targetPdu(Opcode.SCSI_RESPONSE, 0x80);
        resp.itt(cmd.itt()).sequence(statSN++, 2, 33).byteAt(3, 0x02);
        ByteBuf sense = Unpooled.buffer(20).writeShort(18).writeByte(0x70).writeByte(0).writeByte(5).writeZero(9)
                .writeByte(0x21).writeByte(0x00).writeZero(4);
        resp.data(sense);
        ch.writeInbound(resp);
        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, r::get);
        ScsiCommandException s = assertInstanceOf(ScsiCommandException.class, e.getCause());
        assertEquals(5, s.senseKey());
        assertEquals(0x21, s.asc());
    }

    @Test
    void targetPingsAreAnsweredWithItsTagAndWithoutTakingACmdSn() throws Exception {
        login("iscsi://127.0.0.1/iqn.t:x/0", FAST, 32);
        IscsiPdu ping = targetPdu(Opcode.NOP_IN, 0x80);
        ping.lun(0x0001000000000000L).itt(IscsiPdu.NO_TAG).int20(0x1234).sequence(statSN, 1, 32);
        ch.writeInbound(ping);
        IscsiPdu pong = sent();
        assertEquals(Opcode.NOP_OUT, pong.opcode());
        assertTrue(pong.immediate());
        assertEquals(IscsiPdu.NO_TAG, pong.itt());
        assertEquals(0x1234, pong.int20());
        assertEquals(0x0001000000000000L, pong.lun());
        assertEquals(1, pong.cmdSN());
        session.read(0, 1, 512, null);
        ch.runPendingTasks();
        assertEquals(1, sent().cmdSN(), "the answer did not consume a CmdSN");
    }

    @Test
    void aBrokenR2TEndsTheSessionAndFailsEveryCommand() throws Exception {
        login("iscsi://127.0.0.1/iqn.t:x/0", TGT_LIKE, 32);
        ByteBuf data = Unpooled.buffer(65536).writeZero(65536);
        CompletableFuture<Integer> w = session.write(0, 128, data);
        CompletableFuture<Integer> r = session.read(0, 1, 512, null);
        ch.runPendingTasks();
        IscsiPdu cmd = sent();
        sent();
        IscsiPdu bad = targetPdu(Opcode.R2T, 0x80);
        bad.itt(cmd.itt()).int20(1).sequence(statSN, 1, 32).int40(0).int44(4096); // asks for the immediate part
        ch.writeInbound(bad);
        assertFalse(ch.isOpen());
        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, w::get);
        assertTrue(e.getCause().getMessage().contains("R2T offset 0 inside the unsolicited data"), e.getMessage());
        org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, r::get);
        releaseSent();
        assertEquals(1, data.refCnt(), "the session released its references to the data");
    }

    @Test
    void loginRefusalCarriesTheStatus() throws Exception {
        session = new IscsiSession(IscsiUrl.parse("iscsi://127.0.0.1/iqn.t:x/0"), "iqn.test:init");
        ch = new EmbeddedChannel(session);
        IscsiPdu first = sent();
        IscsiPdu r = targetPdu(Opcode.LOGIN_RESPONSE, 0);
        r.itt(first.itt()).byteAt(36, 2).byteAt(37, 3);
        ch.writeInbound(r);
        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                () -> session.loggedIn().get());
        LoginException le = assertInstanceOf(LoginException.class, e.getCause());
        assertEquals(0x0203, le.status());
        assertTrue(le.getMessage().contains("target not found"), le.getMessage());
    }

    @Test
    void chapLoginAnswersTheChallenge() throws Exception {
        session = new IscsiSession(IscsiUrl.parse("iscsi://alice%sesame@127.0.0.1/iqn.t:x/0"), "iqn.test:init");
        ch = new EmbeddedChannel(session);
        IscsiPdu first = sent();
        assertEquals(0x00, first.flags(), "T=0 CSG=0 while authenticating");
        assertEquals("CHAP", keys(first).get("AuthMethod"));
        loginResponse(first, 0x01, Map.of("AuthMethod", "CHAP"), 1, 1);
        IscsiPdu alg = sent();
        assertEquals("7,6,5", keys(alg).get("CHAP_A"));
        loginResponse(alg, 0x01, Map.of("CHAP_A", "5", "CHAP_I", "9", "CHAP_C", "0xdeadbeef"), 1, 1);
        IscsiPdu resp = sent();
        assertEquals(0x81, resp.flags());
        assertEquals("alice", keys(resp).get("CHAP_N"));
        assertEquals(ChapResponder.response("5", "9", "0xdeadbeef", "sesame"), keys(resp).get("CHAP_R"));
        loginResponse(resp, 0x81, Map.of(), 1, 1);
        IscsiPdu op = sent();
        assertEquals(0x87, op.flags());
        loginResponse(op, 0x87, FAST, 1, 32);
        assertTrue(session.loggedIn().isDone());
        assertFalse(session.loggedIn().isCompletedExceptionally());
    }
}
