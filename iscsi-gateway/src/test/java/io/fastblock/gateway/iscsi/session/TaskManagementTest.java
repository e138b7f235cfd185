package io.fastblock.gateway.iscsi.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.gateway.GatewayConfig;
import io.fastblock.gateway.client.AnswerSpin;
import io.fastblock.gateway.iscsi.FileTargetCatalog;
import io.fastblock.gateway.iscsi.IscsiServer;
import io.fastblock.gateway.iscsi.IscsiSettings;
import io.fastblock.gateway.iscsi.session.TestInitiator.Pdu;
import io.fastblock.gateway.scsi.FileBlockDevice;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Task management that really aborts, keepalive, login timer and asynchronous logout, over sockets. */
class TaskManagementTest {
    static final String IQN = "iqn.2026-11.io.fastblock:tmf";
    static final long SIZE = 4L << 20;
    static final IscsiSettings FAST = new IscsiSettings(Duration.ofMillis(700), Duration.ofMillis(400),
            Duration.ofMillis(400), Duration.ofSeconds(3), Duration.ofMillis(600));

    @TempDir
    Path dir;
    Path image;
    FileTargetCatalog catalog;
    IscsiServer server;

    @BeforeEach
    void start() throws Exception {
        image = dir.resolve("lun.img");
        catalog = new FileTargetCatalog(Map.of(IQN, image), SIZE);
        server = new IscsiServer(GatewayConfig.fromArgs("--port=0", "--queue-depth=8"), catalog, FAST).start();
    }

    @AfterEach
    void stop() {
        catalog.releaseHolds();
        server.close();
    }

    TestInitiator login(long isid) throws Exception {
        return TestInitiator.loggedIn(server.port(), IQN, isid);
    }

    FileBlockDevice device() {
        return catalog.opened.get(0);
    }

    static ByteBuffer tmf(TestInitiator ini, int function, int refItt, int refCmdSN) {
        ByteBuffer tmf = ByteBuffer.allocate(48);
        tmf.put(0, (byte) 0x42).put(1, (byte) (0x80 | function));
        tmf.putInt(16, ini.itt++).putInt(20, refItt).putInt(24, ini.cmdSN).putInt(28, ini.expStatSN).putInt(32, refCmdSN);
        return tmf;
    }

    static byte[] write10(int lba, int blocks) {
        return new byte[] {0x2A, 0, (byte) (lba >> 24), (byte) (lba >> 16), (byte) (lba >> 8), (byte) lba, 0,
            (byte) (blocks >> 8), (byte) blocks, 0};
    }

    /**
     * The CmdSN window bounds the commands a session has in the gateway: with queue-depth commands
     * stuck in the device it is closed (MaxCmdSN = ExpCmdSN - 1) and a further command is ignored;
     * each answer reopens it by one and says so; the ignored command, sent again, then runs.
     */
    @Test
    void theWindowClosesWhileQueueDepthCommandsAreInTheGatewayAndReopensWithTheirAnswers() throws Exception {
        try (TestInitiator ini = login(1)) {
            CountDownLatch hold = new CountDownLatch(1);
            device().hold = hold;
            for (int i = 0; i < 8; i++) {
                ini.send(ini.scsi(0xA0, 512, write10(i, 1), false), new byte[512]);
            }
            ini.send(ini.nop(true), new byte[0]);
            Pdu nop = ini.recv();
            assertEquals(0x20, nop.opcode());
            int exp = nop.i32(28);
            assertEquals(ini.cmdSN, exp, "all eight writes delivered");
            assertEquals(exp - 1, nop.i32(32), "MaxCmdSN = ExpCmdSN - 1: the window is closed");
            // An immediate write bypasses the window; with the session full it ends at once, untouched.
            ini.send(ini.scsi(0xA0, 512, write10(100, 1), true), new byte[512]);
            Pdu full = ini.recv();
            assertEquals(0x21, full.opcode());
            assertEquals(0x28, full.u8(3), "TASK SET FULL");
            assertEquals(exp - 1, full.i32(32), "still closed");
            // A ninth write inside the depth the window had at login but outside it now: ignored.
            ByteBuffer ninth = ini.scsi(0xA0, 512, write10(8, 1), false);
            ini.send(ninth, new byte[512]);
            assertTrue(ini.silentFor(300), "nothing answers the ignored write");
            hold.countDown();
            int lastMax = exp - 1;
            for (int i = 0; i < 8; i++) {
                Pdu r = ini.recv();
                assertEquals(0x21, r.opcode(), "SCSI response " + i);
                assertEquals(0, r.u8(3), "GOOD");
                assertEquals(exp, r.i32(28), "ExpCmdSN: the ignored write did not count");
                assertEquals(lastMax + 1, r.i32(32), "each answer reopens the window by one");
                lastMax = r.i32(32);
            }
            assertEquals(exp + 7, lastMax, "all eight answered: the whole depth is open again");
            ini.send(ninth, new byte[512]); // the same CmdSN, now inside the window
            Pdu r = ini.recv();
            assertEquals(0x21, r.opcode());
            assertEquals(0, r.u8(3));
            assertEquals(exp + 1, r.i32(28));
            assertEquals(exp + 8, r.i32(32), "MaxCmdSN never went back");
        }
    }

    @Test
    void abortTaskOfAStuckWriteAnswersAfterTheFenceAndTheWriteNeverAnswers() throws Exception {
        try (TestInitiator ini = login(1)) {
            device().hold = new CountDownLatch(1);
            byte[] data = new byte[512];
            Arrays.fill(data, (byte) 7);
            ByteBuffer w = ini.scsi(0xA0, 512, write10(0, 1), false);
            ini.send(w, data);
            Thread.sleep(100); // the write reaches the (stuck) device
            long t0 = System.nanoTime();
            ini.send(tmf(ini, 1, w.getInt(16), w.getInt(24)), new byte[0]);
            Pdu r = ini.recv();
            long waitedMs = (System.nanoTime() - t0) / 1_000_000;
            assertEquals(0x22, r.opcode(), "TMF response, not the write's status");
            assertEquals(0, r.u8(2), "function complete");
            assertTrue(waitedMs >= 500, "answered only after abortWait fenced the stuck write: " + waitedMs);
            device().hold.countDown();
            ini.send(ini.nop(true), new byte[0]);
            assertEquals(0x20, ini.recv().opcode(), "next PDU is the NOP-In: the aborted write never answered");
        }
    }

    @Test
    void abortTaskWaitsForTheRunningWriteWhenTheBackendFinishes() throws Exception {
        // A fence far beyond the I/O, so "answered when the I/O finished" cannot be confused with the fence
        // on a loaded machine.
        server.close();
        server = new IscsiServer(GatewayConfig.fromArgs("--port=0", "--queue-depth=8"), catalog,
                new IscsiSettings(FAST.loginTimeout(), FAST.nopInterval(), FAST.nopTimeout(), FAST.logoutGrace(),
                        Duration.ofSeconds(20))).start();
        try (TestInitiator ini = login(1)) {
            CountDownLatch hold = new CountDownLatch(1);
            device().hold = hold;
            ByteBuffer w = ini.scsi(0xA0, 512, write10(0, 1), false);
            ini.send(w, new byte[512]);
            Thread.sleep(100);
            ini.send(tmf(ini, 1, w.getInt(16), w.getInt(24)), new byte[0]);
            assertTrue(ini.silentFor(150), "no answer while the aborted write is still in the backend");
            long t0 = System.nanoTime();
            hold.countDown();
            Pdu r = ini.recv();
            long waitedMs = (System.nanoTime() - t0) / 1_000_000;
            assertEquals(0x22, r.opcode());
            assertTrue(waitedMs < 10_000, "answered when the I/O finished, not at the 20 s fence: " + waitedMs);
            ini.send(ini.nop(true), new byte[0]);
            assertEquals(0x20, ini.recv().opcode());
        }
    }

    @Test
    void lunResetAbortsOtherSessionsTasksAndGivesEveryNexusAUnitAttention() throws Exception {
        try (TestInitiator a = login(1); TestInitiator b = login(2)) {
            device().hold = new CountDownLatch(1);
            ByteBuffer w = b.scsi(0xA0, 512, write10(4, 1), false);
            b.send(w, new byte[512]);
            Thread.sleep(100);
            a.send(tmf(a, 5, -1, 0), new byte[0]);
            Pdu r = a.recv();
            assertEquals(0x22, r.opcode());
            assertEquals(0, r.u8(2));
            device().hold.countDown();
            // b's stuck write was aborted: its next command sees 29/03 and nothing about the write
            b.send(b.scsi(0x80, 0, new byte[] {0x00}, false), new byte[0]);
            Pdu ua = b.recv();
            assertEquals(0x21, ua.opcode());
            assertEquals(ua.i32(16), b.itt - 1, "the answer is for the TEST UNIT READY, not the aborted write");
            assertEquals(0x02, ua.u8(3));
            assertEquals(0x06, ua.data()[2 + 2]);
            assertEquals(0x29, ua.data()[2 + 12]);
            assertEquals(0x03, ua.data()[2 + 13]);
            // the issuer's nexus gets it too (SAM-5; libiscsi MultipathIO.Reset checks every path)
            a.send(a.scsi(0x80, 0, new byte[] {0x00}, false), new byte[0]);
            Pdu own = a.recv();
            assertEquals(0x02, own.u8(3));
            assertEquals(0x29, own.data()[2 + 12]);
            assertEquals(0x03, own.data()[2 + 13]);
        }
    }

    /** Commands executing, summed over the server's loops, each asked on itself (AnswerSpin counts per loop thread). */
    int commandsExecuting() throws Exception {
        int sum = 0;
        for (io.netty.util.concurrent.EventExecutor loop : server.eventLoops()) {
            sum += loop.submit(AnswerSpin::commands).get();
        }
        return sum;
    }

    void awaitCommandsExecuting(int expected) throws Exception {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (commandsExecuting() != expected && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertEquals(expected, commandsExecuting());
    }

    /**
     * The loops' count of executing commands (it stops the answer poll at queue depth) comes back
     * to zero whichever way a command ends: answered, aborted, or orphaned by its connection's end.
     */
    @Test
    void theLoopsCountOfExecutingCommandsReturnsToZeroAnsweredAbortedOrOrphaned() throws Exception {
        try (TestInitiator ini = login(1)) {
            device().hold = new CountDownLatch(1);
            ByteBuffer w1 = ini.scsi(0xA0, 512, write10(0, 1), false);
            ini.send(w1, new byte[512]);
            ByteBuffer w2 = ini.scsi(0xA0, 512, write10(1, 1), false);
            ini.send(w2, new byte[512]);
            awaitCommandsExecuting(2);
            ini.send(tmf(ini, 1, w1.getInt(16), w1.getInt(24)), new byte[0]);
            assertEquals(0x22, ini.recv().opcode(), "the abort is answered at the fence");
            assertEquals(2, commandsExecuting(), "the aborted write is still in the device");
            device().hold.countDown();
            assertEquals(0x21, ini.recv().opcode(), "the other write answers");
            awaitCommandsExecuting(0);
        }
        CountDownLatch hold = new CountDownLatch(1);
        try (TestInitiator ini = login(2)) {
            catalog.opened.get(catalog.opened.size() - 1).hold = hold; // the device this session opened
            ini.send(ini.scsi(0xA0, 512, write10(2, 1), false), new byte[512]);
            awaitCommandsExecuting(1);
        }
        awaitCommandsExecuting(1); // the connection is gone, its write is not
        hold.countDown();
        awaitCommandsExecuting(0);
    }

    /**
     * A device call that throws instead of failing its future still ends the command, with a precise
     * error (ScsiCommandHandler turns the throw into a failed future), and leaves no count behind.
     */
    @Test
    void aDeviceThatThrowsEndsTheCommandWithInternalTargetFailure() throws Exception {
        try (TestInitiator ini = login(1)) {
            device().throwOnWrite = new IllegalStateException("injected: thrown by the device call");
            ini.send(ini.scsi(0xA0, 512, write10(0, 1), false), new byte[512]);
            Pdu r = ini.recv();
            assertEquals(0x21, r.opcode());
            assertEquals(2, r.u8(3), "CHECK CONDITION");
            assertEquals(0x04, r.data()[4] & 0x0f, "sense key HARDWARE ERROR");
            assertEquals(0x44, r.data()[14] & 0xff, "ASC INTERNAL TARGET FAILURE");
            awaitCommandsExecuting(0);
            ini.send(ini.scsi(0xA0, 512, write10(0, 1), false), new byte[512]);
            assertEquals(0, ini.recv().u8(3), "the next write runs");
        }
    }

    @Test
    void abortTaskSetAndWarmResetComplete() throws Exception {
        try (TestInitiator ini = login(1)) {
            ini.send(tmf(ini, 2, -1, 0), new byte[0]);
            assertEquals(0, ini.recv().u8(2));
            ini.send(tmf(ini, 4, -1, 0), new byte[0]);
            assertEquals(0, ini.recv().u8(2));
            ini.send(tmf(ini, 6, -1, 0), new byte[0]);
            assertEquals(0, ini.recv().u8(2));
            ini.send(tmf(ini, 8, -1, 0), new byte[0]);
            assertEquals(4, ini.recv().u8(2), "task reassign needs ERL 2");
            ByteBuffer other = tmf(ini, 5, -1, 0);
            other.putLong(8, 1L << 48);
            ini.send(other, new byte[0]);
            assertEquals(2, ini.recv().u8(2), "LUN 1 does not exist");
        }
    }

    @Test
    void coldResetClosesTheConnectionAfterAnswering() throws Exception {
        try (TestInitiator ini = login(1)) {
            ini.send(tmf(ini, 7, -1, 0), new byte[0]);
            assertEquals(0, ini.recv().u8(2));
            assertTrue(ini.closedByPeer());
        }
    }

    @Test
    void keepaliveNopInIsSentAndASilentInitiatorIsDisconnected() throws Exception {
        try (TestInitiator ini = login(1)) {
            Pdu ping = ini.recv(); // idle for nopInterval
            assertEquals(0x20, ping.opcode());
            assertEquals(-1, ping.i32(16), "ITT 0xffffffff: a target ping");
            assertNotEquals(-1, ping.i32(20), "TTT set for the answer");
            ByteBuffer answer = ByteBuffer.allocate(48);
            answer.put(0, (byte) 0x40).put(1, (byte) 0x80).putInt(16, -1).putInt(20, ping.i32(20))
                    .putInt(24, ini.cmdSN).putInt(28, ini.expStatSN);
            ini.send(answer, new byte[0]);
            Pdu again = ini.recv(); // answered: still connected, pinged again after the next idle period
            assertEquals(0x20, again.opcode());
            // now stay silent: the target gives up after nopTimeout
            assertTrue(ini.closedByPeer());
        }
    }

    @Test
    void loginThatNeverFinishesIsClosedByTheLoginTimer() throws Exception {
        try (TestInitiator ini = new TestInitiator(server.port())) {
            long t0 = System.nanoTime();
            assertTrue(ini.closedByPeer());
            assertTrue((System.nanoTime() - t0) / 1_000_000 >= 600);
        }
    }

    static void logout(TestInitiator ini) throws Exception {
        ByteBuffer lo = ByteBuffer.allocate(48);
        lo.put(0, (byte) 0x46).put(1, (byte) 0x80).putInt(16, 0x77).putInt(24, ini.cmdSN).putInt(28, ini.expStatSN);
        ini.send(lo, new byte[0]);
    }

    @Test
    void shutdownAsksEverySessionToLogOut() throws Exception {
        try (TestInitiator ini = login(1)) {
            CompletableFuture<Long> closing = CompletableFuture.supplyAsync(() -> {
                long t0 = System.nanoTime();
                server.close();
                return (System.nanoTime() - t0) / 1_000_000;
            });
            Pdu msg = ini.recv();
            assertEquals(0x32, msg.opcode(), "Async Message");
            assertEquals(1, msg.u8(36), "event 1: logout requested");
            logout(ini);
            Pdu r = ini.recv();
            assertEquals(0x26, r.opcode());
            assertTrue(closing.get() < 2500, "close returned once the initiator logged out");
        }
    }

    @Test
    void losingTheVolumeAsksItsSessionsToLogOut() throws Exception {
        try (TestInitiator ini = login(1)) {
            device().lose();
            Pdu msg = ini.recv();
            assertEquals(0x32, msg.opcode());
            assertEquals(1, msg.u8(36));
        }
    }
}
