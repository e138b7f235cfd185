package io.fastblock.gateway.iscsi.session;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.gateway.GatewayConfig;
import io.fastblock.gateway.iscsi.FileTargetCatalog;
import io.fastblock.gateway.iscsi.IscsiServer;
import io.fastblock.gateway.iscsi.session.TestInitiator.Pdu;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Full feature phase over a real socket, driven by a byte-level test initiator. */
class IscsiSessionTest {
    static final String IQN = "iqn.2026-11.io.fastblock:sess";
    static final long SIZE = 8L << 20;

    @TempDir
    Path dir;
    Path image;
    IscsiServer server;
    TestInitiator ini;

    @BeforeEach
    void start() throws Exception {
        image = dir.resolve("lun.img");
        server = new IscsiServer(GatewayConfig.fromArgs("--port=0", "--queue-depth=8"),
                new FileTargetCatalog(Map.of(IQN, image), SIZE)).start();
        ini = new TestInitiator(server.port());
    }

    @AfterEach
    void stop() throws Exception {
        ini.close();
        server.close();
    }

    void loginNormal(String... extra) throws Exception {
        String[] base = {"InitiatorName", "iqn.2026-11.io.fastblock:test-initiator", "TargetName", IQN,
            "SessionType", "Normal"};
        String[] all = Arrays.copyOf(base, base.length + extra.length);
        System.arraycopy(extra, 0, all, base.length, extra.length);
        Pdu r = ini.login(TestInitiator.keys(all), 1, 3, true);
        assertEquals(0x23, r.opcode());
        assertEquals(0, r.u8(36), "status class");
        assertEquals(0x80 | 1 << 2 | 3, r.flags(), "T=1 CSG=1 NSG=3");
        assertTrue((r.bhs().getShort(14) & 0xffff) != 0, "TSIH");
        // first command of the new nexus: unit attention
        ini.send(ini.scsi(0x80, 0, new byte[] {0x00}, false), new byte[0]);
        Pdu ua = ini.recv();
        assertEquals(0x02, ua.u8(3));
        assertEquals(0x06, ua.data()[2 + 2]);
        assertEquals(0x29, ua.data()[2 + 12]);
    }

    static byte[] read10(int lba, int blocks) {
        return new byte[] {0x28, 0, (byte) (lba >> 24), (byte) (lba >> 16), (byte) (lba >> 8), (byte) lba, 0,
            (byte) (blocks >> 8), (byte) blocks, 0};
    }

    static byte[] write10(int lba, int blocks) {
        byte[] c = read10(lba, blocks);
        c[0] = 0x2A;
        return c;
    }

    byte[] disk(int offset, int len) throws Exception {
        return Arrays.copyOfRange(Files.readAllBytes(image), offset, offset + len);
    }

    @Test
    void readIsSplitAtTheInitiatorsSegmentLimitWithStatusInTheLastDataIn() throws Exception {
        byte[] pattern = new byte[8192];
        new Random(1).nextBytes(pattern);
        loginNormal("MaxRecvDataSegmentLength", "4096");
        try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
            f.seek(512 * 10);
            f.write(pattern);
        }
        ini.send(ini.scsi(0xC0, 8192, read10(10, 16), false), new byte[0]);
        Pdu d0 = ini.recv();
        assertEquals(0x25, d0.opcode());
        assertEquals(0, d0.flags(), "not final, no status");
        assertEquals(0, d0.i32(36), "DataSN");
        assertEquals(0, d0.i32(40), "offset");
        Pdu d1 = ini.recv();
        assertEquals(0x81, d1.flags(), "F + S, no residual");
        assertEquals(0, d1.u8(3), "GOOD");
        assertEquals(1, d1.i32(36));
        assertEquals(4096, d1.i32(40));
        byte[] got = new byte[8192];
        System.arraycopy(d0.data(), 0, got, 0, 4096);
        System.arraycopy(d1.data(), 0, got, 4096, 4096);
        assertArrayEquals(pattern, got);
        assertEquals(ini.cmdSN, d1.i32(28), "ExpCmdSN");
        assertEquals(ini.cmdSN + 7, d1.i32(32), "MaxCmdSN = ExpCmdSN + depth - 1");
    }

    @Test
    void aReadLongerThanMaxBurstLengthIsSentAsSequencesEachEndingWithTheFinalBit() throws Exception {
        byte[] pattern = new byte[16384];
        new Random(2).nextBytes(pattern);
        loginNormal("MaxRecvDataSegmentLength", "4096", "MaxBurstLength", "6144", "FirstBurstLength", "6144");
        try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
            f.seek(512 * 40);
            f.write(pattern);
        }
        ini.send(ini.scsi(0xC0, pattern.length, read10(40, 32), false), new byte[0]);
        // Sequences [0, 6144), [6144, 12288), [12288, 16384); no PDU crosses a sequence's end.
        int[][] expected = {{0, 4096, 0}, {4096, 2048, 0x80}, {6144, 4096, 0}, {10240, 2048, 0x80}, {12288, 4096, 0x81}};
        byte[] got = new byte[pattern.length];
        for (int i = 0; i < expected.length; i++) {
            Pdu d = ini.recv();
            assertEquals(0x25, d.opcode());
            assertEquals(i, d.i32(36), "DataSN");
            assertEquals(expected[i][0], d.i32(40), "buffer offset of PDU " + i);
            assertEquals(expected[i][1], d.data().length, "length of PDU " + i);
            assertEquals(expected[i][2], d.flags(), "flags of PDU " + i);
            System.arraycopy(d.data(), 0, got, d.i32(40), d.data().length);
        }
        assertArrayEquals(pattern, got);
    }

    @Test
    void underflowAndOverflowResiduals() throws Exception {
        loginNormal();
        // INQUIRY returns 96 bytes of the 255 expected: underflow
        ini.send(ini.scsi(0xC0, 255, new byte[] {0x12, 0, 0, 0, (byte) 255}, false), new byte[0]);
        Pdu inq = ini.recv();
        assertEquals(0x80 | 0x02 | 0x01, inq.flags(), "F, U, S");
        assertEquals(96, inq.data().length);
        assertEquals(255 - 96, inq.i32(44));
        // READ of 2 blocks with EDTL of one block: overflow, only EDTL bytes sent
        ini.send(ini.scsi(0xC0, 512, read10(0, 2), false), new byte[0]);
        Pdu rd = ini.recv();
        assertEquals(0x80 | 0x04 | 0x01, rd.flags(), "F, O, S");
        assertEquals(512, rd.data().length);
        assertEquals(512, rd.i32(44));
        // TEST UNIT READY with EDTL 512: nothing transferred -> underflow in the SCSI Response
        ini.send(ini.scsi(0x80, 512, new byte[] {0x00}, false), new byte[0]);
        Pdu tur = ini.recv();
        assertEquals(0x21, tur.opcode());
        assertEquals(0x80 | 0x02, tur.flags());
        assertEquals(512, tur.i32(44));
    }

    @Test
    void checkConditionCarriesSenseInTheScsiResponse() throws Exception {
        loginNormal();
        int blocks = (int) (SIZE / 512);
        ini.send(ini.scsi(0xC0, 512, read10(blocks, 1), false), new byte[0]);
        Pdu r = ini.recv();
        assertEquals(0x21, r.opcode());
        assertEquals(0x02, r.u8(3), "CHECK CONDITION");
        assertEquals(18, ((r.data()[0] & 0xff) << 8) | (r.data()[1] & 0xff), "SenseLength");
        assertEquals(0x70, r.data()[2]);
        assertEquals(0x05, r.data()[2 + 2]);
        assertEquals(0x21, r.data()[2 + 12]);
        assertEquals(0x00, r.data()[2 + 13]);
        ini.send(ini.scsi(0x80, 0, new byte[] {(byte) 0xC0}, false), new byte[0]);
        Pdu bad = ini.recv();
        assertEquals(0x20, bad.data()[2 + 12], "INVALID COMMAND OPERATION CODE");
    }

    @Test
    void writeWithImmediateDataOnly() throws Exception {
        loginNormal("ImmediateData", "Yes", "InitialR2T", "Yes");
        byte[] data = new byte[1024];
        new Random(2).nextBytes(data);
        ini.send(ini.scsi(0xA0, 1024, write10(4, 2), false), data);
        Pdu r = ini.recv();
        assertEquals(0x21, r.opcode());
        assertEquals(0, r.u8(3));
        assertEquals(0x80, r.flags());
        assertArrayEquals(data, disk(4 * 512, 1024));
    }

    @Test
    void writeSolicitedByR2TsOfAtMostMaxBurstLength() throws Exception {
        loginNormal("ImmediateData", "No", "InitialR2T", "Yes", "MaxBurstLength", "4096", "MaxOutstandingR2T", "1");
        byte[] data = new byte[10240];
        new Random(3).nextBytes(data);
        ByteBuffer cmd = ini.scsi(0xA0, data.length, write10(100, 20), false);
        int itt = cmd.getInt(16);
        ini.send(cmd, new byte[0]);
        int[][] expected = {{0, 4096}, {4096, 4096}, {8192, 2048}};
        for (int i = 0; i < expected.length; i++) {
            Pdu r2t = ini.recv();
            assertEquals(0x31, r2t.opcode());
            assertEquals(itt, r2t.i32(16));
            assertEquals(i, r2t.i32(36), "R2TSN");
            assertEquals(expected[i][0], r2t.i32(40), "offset");
            assertEquals(expected[i][1], r2t.i32(44), "desired length");
            int ttt = r2t.i32(20);
            int off = expected[i][0];
            int len = expected[i][1];
            // two Data-Out PDUs per sequence, DataSN restarting at 0
            ini.send(TestInitiator.dataOut(itt, ttt, 0, off, false), Arrays.copyOfRange(data, off, off + len / 2));
            ini.send(TestInitiator.dataOut(itt, ttt, 1, off + len / 2, true),
                    Arrays.copyOfRange(data, off + len / 2, off + len));
        }
        Pdu r = ini.recv();
        assertEquals(0x21, r.opcode());
        assertEquals(0, r.u8(3));
        assertArrayEquals(data, disk(100 * 512, data.length));
    }

    @Test
    void writeWithImmediateUnsolicitedAndSolicitedData() throws Exception {
        loginNormal("ImmediateData", "Yes", "InitialR2T", "No", "FirstBurstLength", "2048");
        byte[] data = new byte[4096];
        new Random(4).nextBytes(data);
        ByteBuffer cmd = ini.scsi(0x20, data.length, write10(0, 8), false); // F=0: unsolicited Data-Out follows
        int itt = cmd.getInt(16);
        ini.send(cmd, Arrays.copyOf(data, 1024));
        ini.send(TestInitiator.dataOut(itt, -1, 0, 1024, true), Arrays.copyOfRange(data, 1024, 2048));
        Pdu r2t = ini.recv();
        assertEquals(0x31, r2t.opcode());
        assertEquals(2048, r2t.i32(40));
        assertEquals(2048, r2t.i32(44));
        ini.send(TestInitiator.dataOut(itt, r2t.i32(20), 0, 2048, true), Arrays.copyOfRange(data, 2048, 4096));
        Pdu r = ini.recv();
        assertEquals(0, r.u8(3));
        assertArrayEquals(data, disk(0, 4096));
    }

    @Test
    void dataOutWithWrongDataSnIsRejected() throws Exception {
        loginNormal("ImmediateData", "No", "InitialR2T", "Yes");
        ByteBuffer cmd = ini.scsi(0xA0, 512, write10(0, 1), false);
        int itt = cmd.getInt(16);
        ini.send(cmd, new byte[0]);
        Pdu r2t = ini.recv();
        ini.send(TestInitiator.dataOut(itt, r2t.i32(20), 5, 0, true), new byte[512]);
        Pdu rej = ini.recv();
        assertEquals(0x3f, rej.opcode());
        assertEquals(0x04, rej.u8(2), "protocol error");
        assertEquals(48, rej.data().length, "rejected header echoed");
        assertEquals(0x05, rej.data()[0]);
    }

    @Test
    void nopOutIsAnsweredWithItsData() throws Exception {
        loginNormal();
        ByteBuffer nop = ini.nop(true);
        ini.send(nop, "ping!".getBytes());
        Pdu r = ini.recv();
        assertEquals(0x20, r.opcode());
        assertEquals(nop.getInt(16), r.i32(16));
        assertEquals(-1, r.i32(20));
        assertEquals("ping!", new String(r.data()));
    }

    @Test
    void commandsAreDeliveredInCmdSnOrderAndOutOfWindowOnesIgnored() throws Exception {
        loginNormal();
        ByteBuffer first = ini.nop(false);
        ByteBuffer second = ini.nop(false);
        ini.send(second, new byte[0]);
        assertTrue(ini.silentFor(200), "waits for the missing CmdSN");
        ini.send(first, new byte[0]);
        assertEquals(first.getInt(16), ini.recv().i32(16));
        Pdu r2 = ini.recv();
        assertEquals(second.getInt(16), r2.i32(16));
        assertEquals(ini.cmdSN, r2.i32(28), "ExpCmdSN advanced past both");
        // far beyond MaxCmdSN, and a duplicate of an old one: both ignored
        ByteBuffer tooHigh = ini.nop(false);
        tooHigh.putInt(24, ini.cmdSN + 100);
        ini.send(tooHigh, new byte[0]);
        ini.send(first, new byte[0]);
        assertTrue(ini.silentFor(200));
        ini.cmdSN--; // the too-high one did not consume a CmdSN
        ByteBuffer ok = ini.nop(false);
        ini.send(ok, new byte[0]);
        assertEquals(ok.getInt(16), ini.recv().i32(16));
    }

    @Test
    void abortTaskOfAQueuedCommand() throws Exception {
        loginNormal();
        ByteBuffer gap = ini.nop(false); // never sent: holds the window
        ByteBuffer queued = ini.scsi(0xC0, 512, read10(0, 1), false);
        ini.send(queued, new byte[0]);
        ByteBuffer tmf = ByteBuffer.allocate(48);
        tmf.put(0, (byte) 0x42).put(1, (byte) 0x81); // immediate, ABORT TASK
        tmf.putInt(16, 0x9999).putInt(20, queued.getInt(16)).putInt(24, ini.cmdSN).putInt(32, queued.getInt(24));
        ini.send(tmf, new byte[0]);
        Pdu r = ini.recv();
        assertEquals(0x22, r.opcode());
        assertEquals(0, r.u8(2), "function complete");
        ini.send(gap, new byte[0]);
        Pdu nopIn = ini.recv();
        assertEquals(0x20, nopIn.opcode(), "the aborted read never answers");
        // unsupported function
        tmf.put(1, (byte) 0x83).putInt(16, 0x999A);
        ini.send(tmf, new byte[0]);
        assertEquals(5, ini.recv().u8(2), "CLEAR ACA: function not supported (no NormACA)");
    }

    @Test
    void snackIsRejected() throws Exception {
        loginNormal();
        ByteBuffer snack = ByteBuffer.allocate(48);
        snack.put(0, (byte) 0x10).put(1, (byte) 0x80);
        ini.send(snack, new byte[0]);
        Pdu rej = ini.recv();
        assertEquals(0x3f, rej.opcode());
        assertEquals(0x05, rej.u8(2));
    }

    @Test
    void logoutClosesTheSessionAndTheDevice() throws Exception {
        loginNormal();
        assertEquals(1, server.openDeviceCount());
        ByteBuffer lo = ByteBuffer.allocate(48);
        lo.put(0, (byte) 0x46).put(1, (byte) 0x80).putInt(16, 0x77).putInt(24, ini.cmdSN);
        ini.send(lo, new byte[0]);
        Pdu r = ini.recv();
        assertEquals(0x26, r.opcode());
        assertEquals(0, r.u8(2));
        assertTrue(ini.closedByPeer());
        for (int i = 0; i < 100 && server.openDeviceCount() > 0; i++) {
            Thread.sleep(20);
        }
        assertEquals(0, server.openDeviceCount());
        assertEquals(0, server.sessionCount());
    }

    @Test
    void discoverySendTargets() throws Exception {
        Pdu login = ini.login(TestInitiator.keys("InitiatorName", "iqn.2026-11.io.fastblock:test-initiator",
                "SessionType", "Discovery"), 1, 3, true);
        assertEquals(0, login.u8(36));
        ByteBuffer text = ByteBuffer.allocate(48);
        text.put(0, (byte) 0x04).put(1, (byte) 0x80).putInt(16, 0x55).putInt(20, -1).putInt(24, ini.cmdSN);
        ini.send(text, TestInitiator.keys("SendTargets", "All"));
        Pdu r = ini.recv();
        assertEquals(0x24, r.opcode());
        assertEquals(IQN, r.keys().get("TargetName"));
        assertEquals("127.0.0.1:" + server.port() + ",1", r.keys().get("TargetAddress"));
    }

    @Test
    void loginFailureClosesTheConnection() throws Exception {
        Pdu r = ini.login(TestInitiator.keys("InitiatorName", "iqn.x", "TargetName", "iqn.2026-11.io.fastblock:nope"),
                0, 1, true);
        assertEquals(2, r.u8(36));
        assertEquals(3, r.u8(37));
        assertTrue(ini.closedByPeer());
    }

    @Test
    void oversizedDataSegmentClosesTheConnection() throws Exception {
        loginNormal();
        ByteBuffer nop = ini.nop(true);
        nop.put(5, (byte) 0x7f); // DataSegmentLength ~8 MiB > 256 KiB
        ini.out.write(nop.array());
        ini.out.flush();
        assertTrue(ini.closedByPeer());
    }

    @Test
    void loginTextContinuedOverTwoPdus() throws Exception {
        byte[] all = TestInitiator.keys("InitiatorName", "iqn.2026-11.io.fastblock:test-initiator", "TargetName", IQN,
                "MaxRecvDataSegmentLength", "65536");
        int cut = 30; // inside the TargetName value
        Pdu first = ini.login(Arrays.copyOf(all, cut), 1, 3, false, true);
        assertEquals(0, first.u8(36));
        assertEquals(1 << 2, first.flags(), "T=0, waits for the rest");
        assertEquals(0, first.data().length);
        Pdu done = ini.login(Arrays.copyOfRange(all, cut, all.length), 1, 3, true, false);
        assertEquals(0, done.u8(36));
        assertEquals(0x80 | 1 << 2 | 3, done.flags());
        assertEquals("262144", done.keys().get("MaxRecvDataSegmentLength"));
    }

    @Test
    void longSendTargetsAnswerIsSplitAtTheInitiatorsSegmentLimit() throws Exception {
        Map<String, Path> many = new java.util.HashMap<>();
        for (int i = 0; i < 40; i++) {
            many.put(String.format("iqn.2026-11.io.fastblock:volume-%02d", i), image);
        }
        try (IscsiServer big = new IscsiServer(GatewayConfig.fromArgs("--port=0"), new FileTargetCatalog(many, SIZE)).start();
             TestInitiator d = new TestInitiator(big.port())) {
            Pdu login = d.login(TestInitiator.keys("InitiatorName", "iqn.2026-11.io.fastblock:test-initiator",
                    "SessionType", "Discovery", "MaxRecvDataSegmentLength", "512"), 1, 3, true);
            assertEquals(0, login.u8(36));
            ByteBuffer text = ByteBuffer.allocate(48);
            text.put(0, (byte) 0x04).put(1, (byte) 0x80).putInt(16, 0x55).putInt(20, -1).putInt(24, d.cmdSN++);
            d.send(text, TestInitiator.keys("SendTargets", "All"));
            java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream();
            int pieces = 0;
            while (true) {
                Pdu r = d.recv();
                pieces++;
                assertTrue(r.data().length <= 512);
                all.write(r.data());
                if ((r.flags() & 0x80) != 0) {
                    assertEquals(-1, r.i32(20));
                    break;
                }
                assertEquals(0x40, r.flags(), "C=1 while more follows");
                ByteBuffer more = ByteBuffer.allocate(48);
                more.put(0, (byte) 0x04).put(1, (byte) 0x80).putInt(16, 0x55).putInt(20, r.i32(20)).putInt(24, d.cmdSN++);
                d.send(more, new byte[0]);
            }
            assertTrue(pieces > 1);
            String joined = all.toString(java.nio.charset.StandardCharsets.UTF_8);
            assertEquals(40, joined.split("TargetName=", -1).length - 1);
            assertTrue(joined.contains("TargetName=iqn.2026-11.io.fastblock:volume-39\0TargetAddress=127.0.0.1:"
                    + big.port() + ",1\0"));
        }
    }

    void loginWithDigests() throws Exception {
        Pdu r = ini.login(TestInitiator.keys("InitiatorName", "iqn.2026-11.io.fastblock:test-initiator",
                "TargetName", IQN, "HeaderDigest", "CRC32C,None", "DataDigest", "CRC32C,None",
                "MaxRecvDataSegmentLength", "8192"), 1, 3, true);
        assertEquals(0, r.u8(36));
        assertEquals("CRC32C", r.keys().get("HeaderDigest"));
        assertEquals("CRC32C", r.keys().get("DataDigest"));
        ini.headerDigest = true;
        ini.dataDigest = true;
        ini.send(ini.scsi(0x80, 0, new byte[] {0x00}, false), new byte[0]);
        assertEquals(0x02, ini.recv().u8(3)); // power-on unit attention, with digests both ways
    }

    @Test
    void digestsProtectWritesAndReads() throws Exception {
        loginWithDigests();
        byte[] data = new byte[4096];
        new Random(3).nextBytes(data);
        ini.send(ini.scsi(0xA0, data.length, write10(8, 8), false), data);
        Pdu w = ini.recv();
        assertEquals(0x21, w.opcode());
        assertEquals(0, w.u8(3));
        ini.send(ini.scsi(0xC0, data.length, read10(8, 8), false), new byte[0]);
        java.io.ByteArrayOutputStream got = new java.io.ByteArrayOutputStream();
        Pdu in;
        do {
            in = ini.recv(); // recv() checks every digest the target sends
            got.write(in.data());
        } while ((in.flags() & 0x01) == 0);
        assertArrayEquals(data, got.toByteArray());
    }

    @Test
    void dataDigestErrorFailsTheWriteWithoutTouchingTheDisk() throws Exception {
        loginWithDigests();
        byte[] data = new byte[1024];
        Arrays.fill(data, (byte) 0x5a);
        ini.corruptDataDigest = true;
        ini.send(ini.scsi(0xA0, data.length, write10(0, 2), false), data);
        Pdu r = ini.recv();
        assertEquals(0x21, r.opcode());
        assertEquals(0x02, r.u8(3), "CHECK CONDITION");
        assertEquals(0x0B, r.data()[2 + 2], "ABORTED COMMAND");
        assertEquals(0x47, r.data()[2 + 12]);
        assertEquals(0x05, r.data()[2 + 13]);
        assertArrayEquals(new byte[1024], disk(0, 1024));
        // the session goes on: a NOP-Out is still answered
        ini.send(ini.nop(true), new byte[0]);
        assertEquals(0x20, ini.recv().opcode());
    }

    @Test
    void headerDigestErrorDropsTheConnection() throws Exception {
        loginWithDigests();
        ini.corruptHeaderDigest = true;
        ini.send(ini.nop(true), new byte[0]);
        assertTrue(ini.closedByPeer());
    }

    @Test
    void discoverySessionsNeverUseDigests() throws Exception {
        Pdu r = ini.login(TestInitiator.keys("InitiatorName", "iqn.2026-11.io.fastblock:test-initiator",
                "SessionType", "Discovery", "HeaderDigest", "CRC32C,None", "DataDigest", "CRC32C"), 1, 3, true);
        assertEquals(0, r.u8(36));
        assertEquals("None", r.keys().get("HeaderDigest"));
        assertEquals("Reject", r.keys().get("DataDigest"));
    }
}
