package io.fastblock.gateway.iscsi.session;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.gateway.GatewayConfig;
import io.fastblock.gateway.iscsi.FileTargetCatalog;
import io.fastblock.gateway.iscsi.IscsiServer;
import io.fastblock.gateway.iscsi.session.TestInitiator.Pdu;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The gateway-wide budget of command data ({@code --data-memory}), over sockets: commands beyond it
 * get no R2T and reach no device until memory comes back, across sessions, and aborted or
 * disconnected waiters give their place back.
 */
class DataBudgetSessionTest {
    static final String IQN = "iqn.2026-11.io.fastblock:budget";
    static final int KIB256 = 256 * 1024;
    static final int BLOCKS = KIB256 / 512;

    @TempDir
    Path dir;
    FileTargetCatalog catalog;
    IscsiServer server;

    @BeforeEach
    void start() throws Exception {
        catalog = new FileTargetCatalog(Map.of(IQN, dir.resolve("lun.img")), 16L << 20);
        server = new IscsiServer(GatewayConfig.fromArgs("--port=0", "--queue-depth=16", "--data-memory=1M"), catalog,
                TaskManagementTest.FAST).start();
    }

    @AfterEach
    void stop() {
        catalog.releaseHolds();
        server.close();
    }

    /** A second or third session is a second or third initiator (its own ISID and name). */
    TestInitiator session(long n) throws Exception {
        return TestInitiator.loggedIn(server.port(), IQN, n);
    }

    static byte[] cdb10(int opcode, int lba, int blocks) {
        return new byte[] {(byte) opcode, 0, (byte) (lba >> 24), (byte) (lba >> 16), (byte) (lba >> 8), (byte) lba, 0,
            (byte) (blocks >> 8), (byte) blocks, 0};
    }

    static byte[] pattern(int seed) {
        byte[] b = new byte[KIB256];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (seed * 31 + i / 512);
        }
        return b;
    }

    /** Sends a 256 KiB WRITE(10) without data (InitialR2T=Yes by default): all of it is solicited. */
    static ByteBuffer write(TestInitiator ini, int lba) throws Exception {
        ByteBuffer cmd = ini.scsi(0xA0, KIB256, cdb10(0x2A, lba, BLOCKS), false);
        ini.send(cmd, new byte[0]);
        return cmd;
    }

    /** The next PDU, which must have {@code opcode}; target pings in between (a window reopening) are answered. */
    static Pdu expect(TestInitiator ini, int opcode) throws Exception {
        Pdu p = ini.recv();
        while (p.opcode() == 0x20 && opcode != 0x20 && p.i32(16) == -1) {
            pong(ini, p);
            p = ini.recv();
        }
        assertEquals(opcode, p.opcode(), "opcode");
        return p;
    }

    /**
     * True when nothing but target pings (answered here) arrives within {@code millis}: a window
     * reopening after pressure may ping at any time.
     */
    static boolean silentButForPings(TestInitiator ini, int millis) throws Exception {
        long deadline = System.nanoTime() + millis * 1_000_000L;
        try {
            while (true) {
                int left = (int) ((deadline - System.nanoTime()) / 1_000_000L);
                if (left <= 0) {
                    return true;
                }
                ini.socket.setSoTimeout(left);
                Pdu p = ini.recv();
                if (p.opcode() != 0x20 || p.i32(16) != -1) {
                    throw new AssertionError("unexpected PDU from target: opcode 0x" + Integer.toHexString(p.opcode()));
                }
                pong(ini, p);
            }
        } catch (java.net.SocketTimeoutException quiet) {
            return true;
        } finally {
            ini.socket.setSoTimeout(5000);
        }
    }

    static void pong(TestInitiator ini, Pdu ping) throws Exception {
        ByteBuffer pong = ByteBuffer.allocate(48);
        pong.put(0, (byte) 0x40).put(1, (byte) 0x80);
        pong.putInt(16, -1).putInt(20, ping.i32(20)).putInt(24, ini.cmdSN).putInt(28, ini.expStatSN);
        ini.send(pong, new byte[0]);
    }

    static void waitFor(LongSupplier value, long want, String what) throws InterruptedException {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (value.getAsLong() != want && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals(want, value.getAsLong(), what);
    }

    /** Reads 256 KiB at {@code lba}: the Data-In PDUs joined, GOOD status in the last. */
    static byte[] read(TestInitiator ini, int lba) throws Exception {
        ini.send(ini.scsi(0xC0, KIB256, cdb10(0x28, lba, BLOCKS), false), new byte[0]);
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        while (true) {
            Pdu p = expect(ini, 0x25);
            got.write(p.data());
            if ((p.flags() & 0x01) != 0) {
                assertEquals(0, p.u8(3), "GOOD");
                return got.toByteArray();
            }
        }
    }

    @Test
    void writesBeyondTheBudgetGetNoR2TUntilMemoryComesBackEvenFromAnotherSession() throws Exception {
        DataBudget budget = server.dataBudget();
        try (TestInitiator a = session(1); TestInitiator b = session(2)) {
            Map<Integer, Integer> lbaOfItt = new HashMap<>();
            Map<Integer, Integer> tttOfItt = new HashMap<>();
            for (int i = 0; i < 4; i++) {
                ByteBuffer cmd = write(a, i * BLOCKS);
                lbaOfItt.put(cmd.getInt(16), i * BLOCKS);
            }
            for (int i = 0; i < 4; i++) {
                Pdu r2t = expect(a, 0x31);
                assertEquals(KIB256, r2t.i32(44), "desired length");
                tttOfItt.put(r2t.i32(16), r2t.i32(20));
            }
            assertEquals(4, tttOfItt.size());
            assertEquals(1L << 20, budget.used(), "four 256 KiB writes hold the whole 1 MiB");
            ByteBuffer bWrite = write(b, 8 * BLOCKS);
            assertTrue(silentButForPings(b, 300), "the other session's write is not solicited while the budget is spent");
            assertEquals(1, budget.waiting());

            CountDownLatch hold = new CountDownLatch(1);
            catalog.opened.get(0).hold = hold;
            int first = lbaOfItt.keySet().stream().min(Integer::compare).orElseThrow();
            a.send(TestInitiator.dataOut(first, tttOfItt.get(first), 0, 0, true), pattern(lbaOfItt.get(first)));
            assertTrue(silentButForPings(b, 300), "a write in the device still holds its memory");
            assertEquals(1, budget.waiting());

            hold.countDown();
            Pdu done = expect(a, 0x21);
            assertEquals(first, done.i32(16));
            assertEquals(0, done.u8(3), "GOOD");
            Pdu bR2t = expect(b, 0x31);
            assertEquals(bWrite.getInt(16), bR2t.i32(16), "the waiting write is solicited once memory came back");
            b.send(TestInitiator.dataOut(bWrite.getInt(16), bR2t.i32(20), 0, 0, true), pattern(8 * BLOCKS));
            for (Map.Entry<Integer, Integer> e : lbaOfItt.entrySet()) {
                if (e.getKey() != first) {
                    a.send(TestInitiator.dataOut(e.getKey(), tttOfItt.get(e.getKey()), 0, 0, true), pattern(e.getValue()));
                }
            }
            for (int i = 0; i < 3; i++) {
                assertEquals(0, expect(a, 0x21).u8(3), "GOOD");
            }
            assertEquals(0, expect(b, 0x21).u8(3), "GOOD");
            for (int lba : lbaOfItt.values()) {
                assertArrayEquals(pattern(lba), read(a, lba), "data at lba " + lba);
            }
            assertArrayEquals(pattern(8 * BLOCKS), read(b, 8 * BLOCKS));
            waitFor(budget::used, 0, "every byte given back");
            assertEquals(0, budget.waiting());
        }
    }

    @Test
    void readsBeyondTheBudgetReachTheDeviceOnlyAsMemoryComesBack() throws Exception {
        DataBudget budget = server.dataBudget();
        try (TestInitiator ini = session(1)) {
            byte[][] written = new byte[8][];
            for (int i = 0; i < 8; i++) {
                written[i] = pattern(100 + i);
                ByteBuffer cmd = write(ini, i * BLOCKS);
                Pdu r2t = expect(ini, 0x31);
                ini.send(TestInitiator.dataOut(cmd.getInt(16), r2t.i32(20), 0, 0, true), written[i]);
                assertEquals(0, expect(ini, 0x21).u8(3));
            }
            waitFor(budget::used, 0, "writes gave their memory back");
            CountDownLatch hold = new CountDownLatch(1);
            catalog.opened.get(0).hold = hold;
            int before = catalog.opened.get(0).readsAsked.get();
            for (int i = 0; i < 8; i++) {
                ini.send(ini.scsi(0xC0, KIB256, cdb10(0x28, i * BLOCKS, BLOCKS), false), new byte[0]);
            }
            Thread.sleep(300);
            assertEquals(4, catalog.opened.get(0).readsAsked.get() - before, "only what fits in 1 MiB reaches the device");
            assertEquals(4, budget.waiting());
            hold.countDown();
            Map<Integer, ByteArrayOutputStream> got = new HashMap<>();
            int finished = 0;
            while (finished < 8) {
                Pdu p = expect(ini, 0x25);
                got.computeIfAbsent(p.i32(16), k -> new ByteArrayOutputStream()).write(p.data());
                if ((p.flags() & 0x01) != 0) {
                    assertEquals(0, p.u8(3), "GOOD");
                    finished++;
                }
            }
            assertEquals(8, catalog.opened.get(0).readsAsked.get() - before);
            int firstItt = got.keySet().stream().min(Integer::compare).orElseThrow();
            for (int i = 0; i < 8; i++) {
                assertArrayEquals(written[i], got.get(firstItt + i).toByteArray(), "read " + i);
            }
            waitFor(budget::used, 0, "every byte given back");
        }
    }

    @Test
    void anAbortedOrDisconnectedWaiterGivesItsPlaceBack() throws Exception {
        DataBudget budget = server.dataBudget();
        try (TestInitiator a = session(1); TestInitiator b = session(2)) {
            for (int i = 0; i < 4; i++) {
                write(a, i * BLOCKS);
            }
            Map<Integer, Integer> ttt = new HashMap<>();
            for (int i = 0; i < 4; i++) {
                Pdu r2t = expect(a, 0x31);
                ttt.put(r2t.i32(16), r2t.i32(20));
            }
            ByteBuffer waiting = write(a, 4 * BLOCKS);
            TestInitiator c = session(3);
            write(c, 12 * BLOCKS);
            write(c, 13 * BLOCKS);
            waitFor(() -> budget.waiting(), 3, "three writes wait");

            a.send(TaskManagementTest.tmf(a, 1, waiting.getInt(16), waiting.getInt(24)), new byte[0]);
            Pdu tmf = expect(a, 0x22);
            assertEquals(0, tmf.u8(2), "function complete");
            assertEquals(2, budget.waiting(), "the aborted write left the queue");
            c.close();
            waitFor(() -> budget.waiting(), 0, "a closed session's waiters leave the queue");
            assertEquals(1L << 20, budget.used(), "the four solicited writes still hold theirs");

            ByteBuffer bWrite = write(b, 8 * BLOCKS);
            for (Map.Entry<Integer, Integer> e : ttt.entrySet()) {
                a.send(TestInitiator.dataOut(e.getKey(), e.getValue(), 0, 0, true), new byte[KIB256]);
            }
            for (int i = 0; i < 4; i++) {
                assertEquals(0, expect(a, 0x21).u8(3));
            }
            Pdu r2t = expect(b, 0x31);
            assertEquals(bWrite.getInt(16), r2t.i32(16), "next in line after the departed waiters");
            b.send(TestInitiator.dataOut(bWrite.getInt(16), r2t.i32(20), 0, 0, true), pattern(7));
            assertEquals(0, expect(b, 0x21).u8(3));
            assertTrue(silentButForPings(a, 200), "the aborted write never ran");
            assertArrayEquals(new byte[KIB256], Arrays.copyOf(read(a, 4 * BLOCKS), KIB256), "nothing written there");
            waitFor(budget::used, 0, "every byte given back");
        }
    }

    /**
     * While the budget is pressed, answered commands do not reopen their CmdSN window slots: the
     * answers carry the old MaxCmdSN. Once there is room the slots reopen and a NOP-In (a target
     * ping, which the initiator answers) carries the new MaxCmdSN.
     */
    @Test
    void underPressureAnswersKeepTheWindowNarrowAndANopInReopensIt() throws Exception {
        DataBudget budget = server.dataBudget();
        try (TestInitiator a = session(1)) {
            Map<Integer, Integer> ttt = new HashMap<>();
            for (int i = 0; i < 4; i++) {
                write(a, i * BLOCKS);
            }
            int maxBefore = 0;
            for (int i = 0; i < 4; i++) {
                Pdu r2t = expect(a, 0x31);
                ttt.put(r2t.i32(16), r2t.i32(20));
                maxBefore = r2t.i32(32);
            }
            ByteBuffer fifth = write(a, 4 * BLOCKS);
            waitFor(() -> budget.waiting(), 1, "the fifth write waits for memory");
            int[] itts = ttt.keySet().stream().mapToInt(Integer::intValue).sorted().toArray();
            a.send(TestInitiator.dataOut(itts[0], ttt.get(itts[0]), 0, 0, true), pattern(1));
            // The first answer frees 256 KiB, which the fifth write takes at once: still full, still pressed.
            Pdu first = expect(a, 0x21);
            assertEquals(0, first.u8(3));
            assertEquals(maxBefore, first.i32(32), "the answered slot stays closed");
            Pdu fifthR2t = expect(a, 0x31);
            assertEquals(fifth.getInt(16), fifthR2t.i32(16));
            assertEquals(maxBefore, fifthR2t.i32(32));
            a.send(TestInitiator.dataOut(itts[1], ttt.get(itts[1]), 0, 0, true), pattern(2));
            // This answer leaves 768 KiB held and nobody waiting: room, so both withheld slots reopen.
            boolean answered = false;
            Pdu nop = null;
            while (!answered || nop == null) {
                Pdu p = a.recv();
                if (p.opcode() == 0x21) {
                    assertEquals(0, p.u8(3));
                    assertEquals(maxBefore, p.i32(32), "withheld when it was answered (the budget was full)");
                    answered = true;
                } else {
                    assertEquals(0x20, p.opcode(), "a NOP-In");
                    nop = p;
                }
            }
            assertEquals(-1, nop.i32(16), "ITT 0xffffffff: a target ping");
            assertTrue(nop.i32(20) != -1, "with a TTT the initiator echoes");
            assertEquals(maxBefore + 2, nop.i32(32), "both withheld slots open again");
            pong(a, nop);
            a.send(TestInitiator.dataOut(itts[2], ttt.get(itts[2]), 0, 0, true), pattern(3));
            Pdu third = expect(a, 0x21);
            assertEquals(maxBefore + 3, third.i32(32), "no pressure: an answer reopens its slot at once");
            a.send(TestInitiator.dataOut(itts[3], ttt.get(itts[3]), 0, 0, true), pattern(4));
            assertEquals(maxBefore + 4, expect(a, 0x21).i32(32));
            a.send(TestInitiator.dataOut(fifth.getInt(16), fifthR2t.i32(20), 0, 0, true), pattern(5));
            assertEquals(maxBefore + 5, expect(a, 0x21).i32(32), "the whole depth is open again");
            assertArrayEquals(pattern(5), read(a, 4 * BLOCKS));
            waitFor(budget::used, 0, "every byte given back");
        }
    }
}
