package io.fastblock.gateway.iscsi.session;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.gateway.GatewayConfig;
import io.fastblock.gateway.iscsi.FileTargetCatalog;
import io.fastblock.gateway.iscsi.IscsiServer;
import io.fastblock.gateway.iscsi.session.TestInitiator.Pdu;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sends mutated Login, Text and SCSI PDUs (seeded: {@code -Dfuzz.seed}, count {@code -Dfuzz.pdus},
 * 50,000 by default; the 1,000,000 run is done by hand) at a gateway with two file volumes, all
 * aimed at the second one, while a canary session keeps reading the first and checking every byte.
 * The gateway must keep serving the canary without stalls, must still log in and serve a fresh
 * session afterwards, must clean every session up, and the first volume must be byte-identical.
 */
class IscsiFuzzIT {
    static final String PROTECTED = "iqn.2026-11.io.fastblock:protected-canary";
    static final String FUZZED = "iqn.2026-11.io.fastblock:fuzz";
    static final long SIZE = 4L << 20;
    static final int CONNECTIONS = 4;
    static final int PDUS_PER_CONNECTION = 3000;

    @TempDir
    Path dir;

    @Test
    void mutatedPdusNeverCrashTheGatewayHangAnotherSessionOrTouchAnotherVolume() throws Exception {
        long total = Long.getLong("fuzz.pdus", 50_000);
        long seed = Long.getLong("fuzz.seed", 20261121L);
        byte[] pattern = new byte[(int) SIZE];
        new Random(seed ^ 0x5eed).nextBytes(pattern);
        Path protectedImage = dir.resolve("protected.img");
        Files.write(protectedImage, pattern);
        FileTargetCatalog catalog = new FileTargetCatalog(Map.of(PROTECTED, protectedImage, FUZZED,
                dir.resolve("fuzz.img")), SIZE);
        catalog.thin = true;
        long t0 = System.nanoTime();
        try (IscsiServer server = new IscsiServer(GatewayConfig.fromArgs("--port=0"), catalog).start()) {
            AtomicBoolean done = new AtomicBoolean();
            AtomicReference<Throwable> canaryFailure = new AtomicReference<>();
            AtomicLong canaryOps = new AtomicLong();
            AtomicLong canaryMaxMillis = new AtomicLong();
            Thread canary = new Thread(() -> canary(server.port(), pattern, done, canaryOps, canaryMaxMillis,
                    canaryFailure), "canary");
            canary.start();

            AtomicLong sent = new AtomicLong();
            AtomicLong connections = new AtomicLong();
            List<Thread> fuzzers = new ArrayList<>();
            for (int i = 0; i < CONNECTIONS; i++) {
                long s = seed * 31 + i;
                Thread t = new Thread(() -> fuzzLoop(server.port(), s, total, server::pdusReceived, sent, connections),
                        "fuzzer-" + i);
                fuzzers.add(t);
                t.start();
            }
            for (Thread t : fuzzers) {
                t.join();
            }
            done.set(true);
            canary.join(30_000);
            long seconds = Math.max(1, (System.nanoTime() - t0) / 1_000_000_000L);
            System.out.printf("fuzz: %d PDUs received by the gateway (%d written) on %d connections in %d s (seed %d);"
                    + " canary %d reads, max %d ms%n", server.pdusReceived(), sent.get(), connections.get(), seconds, seed,
                    canaryOps.get(), canaryMaxMillis.get());

            assertNull(canaryFailure.get(), () -> "canary failed: " + canaryFailure.get());
            assertTrue(server.pdusReceived() >= total, "received " + server.pdusReceived());
            assertTrue(canaryOps.get() > 10, "the canary kept working: " + canaryOps.get());
            assertTrue(canaryMaxMillis.get() < 5000, "no canary read stalled: " + canaryMaxMillis.get() + " ms");

            // the gateway still logs in and serves a fresh session on the fuzzed volume
            try (TestInitiator fresh = new TestInitiator(server.port())) {
                loginAndClearUa(fresh, FUZZED, 0x777);
                byte[] data = new byte[1024];
                new Random(seed).nextBytes(data);
                fresh.send(fresh.scsi(0xA0, 1024, IscsiSessionTest.write10(100, 2), false), data);
                assertEquals(0, fresh.recv().u8(3));
                fresh.send(fresh.scsi(0xC0, 1024, IscsiSessionTest.read10(100, 2), false), new byte[0]);
                Pdu in = fresh.recv();
                assertArrayEquals(data, in.data());
            }
            for (int i = 0; i < 200 && (server.sessionCount() > 0 || server.openDeviceCount() > 0); i++) {
                Thread.sleep(50);
            }
            assertEquals(0, server.sessionCount(), () -> "every fuzzed session was cleaned up: " + server.sessions());
            assertEquals(0, server.openDeviceCount(), "every device was closed");
        }
        assertArrayEquals(pattern, Files.readAllBytes(protectedImage), "the protected volume is byte-identical");
        // and the comparison means something: the fuzzed sessions' writes did land, on their own volume
        byte[] fuzzed = Files.readAllBytes(dir.resolve("fuzz.img"));
        long written = 0;
        for (byte b : fuzzed) {
            written += b != 0 ? 1 : 0;
        }
        System.out.printf("fuzz: %d non-zero bytes written to the fuzzed volume%n", written);
        assertTrue(written > 0, "no fuzzed write reached the fuzzed volume: the isolation check saw no writes");
    }

    static void loginAndClearUa(TestInitiator ini, String target, int isid) throws IOException {
        Pdu r = ini.login(TestInitiator.keys("InitiatorName", "iqn.2026-11.io.fastblock:canary" + isid,
                "TargetName", target, "MaxRecvDataSegmentLength", "65536"), 1, 3, true);
        assertEquals(0, r.u8(36), "login status");
        ini.send(ini.scsi(0x80, 0, new byte[] {0x00}, false), new byte[0]);
        ini.recv();
    }

    /** Reads random ranges of the protected volume and checks them, until the fuzzing is done. */
    static void canary(int port, byte[] pattern, AtomicBoolean done, AtomicLong ops, AtomicLong maxMillis,
                       AtomicReference<Throwable> failure) {
        Random r = new Random(1);
        try (TestInitiator ini = new TestInitiator(port)) {
            loginAndClearUa(ini, PROTECTED, 0x555);
            while (!done.get()) {
                int lba = r.nextInt((int) (SIZE / 512) - 16);
                int blocks = 1 + r.nextInt(16);
                long t = System.nanoTime();
                ini.send(ini.scsi(0xC0, blocks * 512, IscsiSessionTest.read10(lba, blocks), false), new byte[0]);
                java.io.ByteArrayOutputStream got = new java.io.ByteArrayOutputStream();
                Pdu in;
                do {
                    in = ini.recv();
                    if (in.opcode() == 0x20) {
                        continue; // keepalive NOP-In
                    }
                    got.write(in.data());
                } while (in.opcode() != 0x25 || (in.flags() & 0x01) == 0);
                maxMillis.accumulateAndGet((System.nanoTime() - t) / 1_000_000, Math::max);
                byte[] want = Arrays.copyOfRange(pattern, lba * 512, (lba + blocks) * 512);
                if (!Arrays.equals(want, got.toByteArray())) {
                    throw new AssertionError("canary read wrong data at LBA " + lba);
                }
                ops.incrementAndGet();
                Thread.sleep(5);
            }
        } catch (Throwable t) {
            failure.set(t);
        }
    }

    /** Connection after connection: log in (or fuzz the login), then send mutated PDUs until cut off. */
    static void fuzzLoop(int port, long seed, long total, java.util.function.LongSupplier received, AtomicLong sent,
                         AtomicLong connections) {
        PduFuzzer fuzz = new PduFuzzer(seed, FUZZED);
        Random r = fuzz.random();
        // PDUs written after the gateway dropped a connection never arrive: go on until it has
        // decoded the requested number.
        while (received.getAsLong() < total) {
            connections.incrementAndGet();
            try (Socket s = new Socket("127.0.0.1", port)) {
                s.setSoTimeout(10_000);
                s.setTcpNoDelay(true);
                OutputStream out = new BufferedOutputStream(s.getOutputStream(), 1 << 16);
                fuzz.cmdSN = 1;
                if (r.nextInt(10) == 0) {
                    // fuzz the login phase itself: mutated Login PDUs, no full feature phase
                    Thread drain = drain(s.getInputStream(), new AtomicBoolean());
                    for (int i = 0; i < 1 + r.nextInt(3); i++) {
                        write(out, fuzz.login(), r, true);
                        sent.incrementAndGet();
                    }
                    out.flush();
                    s.shutdownOutput();
                    drain.join(2000);
                    continue;
                }
                write(out, validLogin(fuzz), r, false);
                out.flush();
                byte[] rsp = new byte[48];
                new java.io.DataInputStream(s.getInputStream()).readFully(rsp);
                int dsl = ((rsp[5] & 0xff) << 16) | ((rsp[6] & 0xff) << 8) | (rsp[7] & 0xff);
                s.getInputStream().readNBytes(dsl + (-dsl & 3));
                if (rsp[36] != 0) {
                    throw new AssertionError("valid fuzzer login refused: " + rsp[36] + "/" + rsp[37]);
                }
                fuzz.cmdSN = ByteBuffer.wrap(rsp).getInt(28); // ExpCmdSN
                AtomicBoolean gone = new AtomicBoolean();
                Thread drain = drain(s.getInputStream(), gone);
                boolean breakFraming = r.nextInt(5) == 0;
                for (int i = 0; i < PDUS_PER_CONNECTION && received.getAsLong() < total && !gone.get(); i++) {
                    write(out, fuzz.next(breakFraming), r, breakFraming);
                    sent.incrementAndGet();
                    if (i % 8 == 7) {
                        out.flush();
                    }
                }
                out.flush();
                s.shutdownOutput();
                drain.join(2000);
            } catch (IOException e) {
                // the gateway closed the connection on a PDU it could not accept: on to the next one
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    static PduFuzzer.Wire validLogin(PduFuzzer fuzz) {
        ByteBuffer b = ByteBuffer.allocate(48);
        b.put(0, (byte) 0x43).put(1, (byte) (0x80 | 1 << 2 | 3));
        b.putInt(8, 0x80000000 | fuzz.random().nextInt(1 << 20)).putShort(12, (short) 1);
        b.putInt(16, fuzz.itt++);
        String keys = "InitiatorName=iqn.2026-11.io.fastblock:fuzzer\0TargetName=" + FUZZED
                + "\0InitialR2T=No\0ImmediateData=Yes\0MaxRecvDataSegmentLength=65536\0";
        return new PduFuzzer.Wire(b.array(), keys.getBytes(java.nio.charset.StandardCharsets.UTF_8), "login");
    }

    static void write(OutputStream out, PduFuzzer.Wire w, Random r, boolean mayLie) throws IOException {
        byte[] h = w.bhs();
        int len = w.data().length;
        int declared = len;
        if (mayLie && w.kind().endsWith("+len")) {
            declared = Math.max(0, len + r.nextInt(200) - 100);
        }
        h[5] = (byte) (declared >> 16);
        h[6] = (byte) (declared >> 8);
        h[7] = (byte) declared;
        out.write(h);
        out.write(w.data());
        out.write(new byte[-len & 3]);
    }

    /** Reads and drops everything the gateway answers; sets {@code gone} when it closes. */
    static Thread drain(InputStream in, AtomicBoolean gone) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[1 << 16];
            try {
                while (in.read(buf) >= 0) {
                    // responses are not checked: only that the gateway keeps going
                }
            } catch (IOException ignored) {
                // reset
            }
            gone.set(true);
        }, "drain");
        t.setDaemon(true);
        t.start();
        return t;
    }
}
