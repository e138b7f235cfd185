package io.fastblock.gateway.iscsi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.gateway.GatewayConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Runs real third-party initiators (libiscsi tools, qemu-img) against an {@link IscsiServer}. */
class IscsiToolsIT {
    static final String IQN = "iqn.2026-11.io.fastblock:itvol";
    static final String INITIATOR = "iqn.2026-11.io.fastblock:test-initiator";
    static final long SIZE = 64L << 20;

    @TempDir
    static Path dir;
    static IscsiServer server;
    static FileTargetCatalog catalog;

    @BeforeAll
    static void start() throws Exception {
        catalog = new FileTargetCatalog(Map.of(IQN, dir.resolve("lun0.img")), SIZE);
        server = new IscsiServer(GatewayConfig.fromArgs("--port=0"), catalog).start();
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    record Result(int exit, String output) {
    }

    static Result run(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        p.getOutputStream().close();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("timed out: " + String.join(" ", cmd));
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        return new Result(p.exitValue(), out);
    }

    static String portal() {
        return "iscsi://127.0.0.1:" + server.port();
    }

    static String lunUrl(String iqn) {
        return portal() + "/" + iqn + "/0";
    }

    @Test
    void iscsiLsListsTheTarget() throws Exception {
        Result r = run("iscsi-ls", "-s", "-i", INITIATOR, portal());
        assertEquals(0, r.exit(), r.output());
        assertTrue(r.output().contains("Target:" + IQN + " Portal:127.0.0.1:" + server.port() + ",1"), r.output());
        assertTrue(r.output().contains("Lun:0") && r.output().contains("DIRECT_ACCESS"), r.output());
    }

    @Test
    void iscsiInqShowsTheStandardInquiry() throws Exception {
        Result r = run("iscsi-inq", "-i", INITIATOR, lunUrl(IQN));
        assertEquals(0, r.exit(), r.output());
        assertTrue(r.output().contains("Vendor:FASTBLK"), r.output());
        assertTrue(r.output().contains("Product:fastblock volume"), r.output());
        assertTrue(r.output().contains("CmdQue:1"), r.output());
    }

    @Test
    void iscsiInqReadsSerialAndIdentificationPages() throws Exception {
        Result serial = run("iscsi-inq", "-i", INITIATOR, "-e", "1", "-c", "128", lunUrl(IQN));
        assertEquals(0, serial.exit(), serial.output());
        assertTrue(serial.output().contains("FB000000000000002a"), serial.output());
        Result ids = run("iscsi-inq", "-i", INITIATOR, "-e", "1", "-c", "131", lunUrl(IQN));
        assertEquals(0, ids.exit(), ids.output());
        assertTrue(ids.output().contains("Designator Type:(3) NAA"), ids.output());
        assertTrue(ids.output().contains("Designator:[" + IQN + "]"), ids.output());
    }

    @Test
    void readCapacity16ReportsTheSize() throws Exception {
        Result r = run("iscsi-readcapacity16", "-i", INITIATOR, lunUrl(IQN));
        assertEquals(0, r.exit(), r.output());
        assertTrue(r.output().contains("Total size:" + SIZE), r.output());
        assertTrue(r.output().contains("LOGICAL BLOCK LENGTH IN BYTES:512"), r.output());
    }

    @Test
    void qemuImgWritesAndReadsBackTheSameBytes() throws Exception {
        byte[] data = new byte[16 << 20];
        new Random(7).nextBytes(data);
        Path src = dir.resolve("random16.raw");
        Files.write(src, data);
        Result in = run("qemu-img", "convert", "-n", "-f", "raw", "-O", "raw", src.toString(), lunUrl(IQN));
        assertEquals(0, in.exit(), in.output());
        Path back = dir.resolve("back.raw");
        Result out = run("qemu-img", "convert", "-f", "raw", "-O", "raw", lunUrl(IQN), back.toString());
        assertEquals(0, out.exit(), out.output());
        byte[] read = Files.readAllBytes(back);
        assertEquals(SIZE, read.length);
        assertArrayEquals(data, Arrays.copyOf(read, data.length));
        // and the bytes really are on the backing file behind the target
        byte[] onDisk = Files.readAllBytes(dir.resolve("lun0.img"));
        assertArrayEquals(data, Arrays.copyOf(onDisk, data.length));
    }

    @Test
    void loginToAnUnknownTargetFails() throws Exception {
        Result r = run("iscsi-inq", "-i", INITIATOR, lunUrl("iqn.2026-11.io.fastblock:no-such-volume"));
        assertNotEquals(0, r.exit(), r.output());
        assertTrue(r.output().contains("Target not found"), r.output());
    }

    @Test
    void devicesAreClosedWhenTheirSessionsEnd() throws Exception {
        Result r = run("iscsi-inq", "-i", INITIATOR, lunUrl(IQN));
        assertEquals(0, r.exit(), r.output());
        for (int i = 0; i < 100 && server.openDeviceCount() > 0; i++) {
            Thread.sleep(50); // the tool has exited; its connection close reaches us asynchronously
        }
        assertEquals(0, server.openDeviceCount());
        List<Boolean> closed = new ArrayList<>();
        catalog.opened.forEach(d -> closed.add(d.isClosed()));
        assertTrue(!closed.isEmpty() && closed.stream().allMatch(b -> b), closed.toString());
    }

    @Test
    void qemuWithCrc32cHeaderDigestsWritesAndReadsBack() throws Exception {
        // QEMU asks libiscsi for "CRC32C" only; libiscsi 1.19 has header digests (no data digests)
        // and checks ours on every PDU it receives.
        byte[] data = new byte[4 << 20];
        new Random(11).nextBytes(data);
        Path src = dir.resolve("digest-src.raw");
        Files.write(src, data);
        String opts = "driver=iscsi,transport=tcp,portal=127.0.0.1:" + server.port() + ",target=" + IQN
                + ",lun=0,initiator-name=" + INITIATOR + ",header-digest=crc32c";
        Result in = run("qemu-img", "convert", "-n", "-f", "raw", "--target-image-opts", src.toString(), opts);
        assertEquals(0, in.exit(), in.output());
        Path back = dir.resolve("digest-back.raw");
        Result out = run("qemu-img", "convert", "--image-opts", opts, "-O", "raw", back.toString());
        assertEquals(0, out.exit(), out.output());
        assertArrayEquals(data, Arrays.copyOf(Files.readAllBytes(back), data.length));
        assertTrue(server.headerDigestSessions() > 0, "the sessions used header digests");
    }
}
