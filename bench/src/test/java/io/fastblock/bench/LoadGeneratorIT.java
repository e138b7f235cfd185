package io.fastblock.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fastblock.bench.initiator.IscsiInitiator;
import io.fastblock.bench.initiator.IscsiSession;
import io.fastblock.bench.initiator.IscsiUrl;
import io.fastblock.bench.initiator.LoginException;
import io.fastblock.gateway.GatewayConfig;
import io.fastblock.gateway.iscsi.FileTargetCatalog;
import io.fastblock.gateway.iscsi.IscsiServer;
import io.fastblock.gateway.iscsi.TargetAccess;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * The load generator against the project's own iSCSI target ({@link IscsiServer} on real sockets and
 * file-backed volumes): writes with --verify, reads them back with --verify in a second job, large
 * writes through R2T, CHAP. Asserts correctness and consistent counts, never speed.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class LoadGeneratorIT {
    static final String VOL_A = "iqn.2026-11.io.fastblock:bench-a";
    static final String VOL_B = "iqn.2026-11.io.fastblock:bench-b";
    static final String VOL_CHAP = "iqn.2026-11.io.fastblock:bench-chap";
    static final long SIZE = 64L << 20;

    @TempDir
    static Path dir;
    static IscsiServer server;

    @BeforeAll
    static void start() throws Exception {
        FileTargetCatalog catalog = new FileTargetCatalog(
                Map.of(VOL_A, dir.resolve("a.img"), VOL_B, dir.resolve("b.img"), VOL_CHAP, dir.resolve("c.img")), SIZE);
        catalog.rules.put(VOL_CHAP, TargetAccess.chap(TargetAccess.Chap.oneWay("bench", "bench-secret-1")));
        server = new IscsiServer(GatewayConfig.fromArgs("--port=0"), catalog).start();
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    static String url(String iqn) {
        return "iscsi://127.0.0.1:" + server.port() + "/" + iqn + "/0";
    }

    static void assertCountsConsistent(Report report, int bs) {
        for (VolumeResult v : report.volumes()) {
            for (DirectionStats d : List.of(v.read(), v.write())) {
                assertEquals(d.ios(), d.latency().count(), "every counted I/O has a latency");
                assertEquals(d.ios() * bs, d.bytes());
            }
            assertTrue(v.measuredNanos() > 0);
        }
    }

    @Test
    @Order(1)
    void randomWritesOnTwoVolumesAreReadBackExactly() throws Exception {
        Path json = dir.resolve("write.json");
        JobSpec spec = JobSpec.parse("--url", url(VOL_A), "--url", url(VOL_B), "--rw", "randwrite", "--bs", "4k",
                "--iodepth", "16", "--runtime", "3s", "--span", "8M", "--seed", "11", "--verify", "--json",
                json.toString());
        Report report = LoadGenerator.run(spec);
        System.out.print(report.table());
        assertEquals(0, report.errors(), report.table());
        assertEquals(0, report.mismatches(), report.table());
        assertCountsConsistent(report, 4096);
        for (VolumeResult v : report.volumes()) {
            assertTrue(v.write().ios() > 0, report.table());
            assertEquals(0, v.read().ios());
            VolumeResult.VerifyStats s = v.verify();
            assertTrue(s.readBack() > 0 && s.readBack() <= Math.min(v.write().ios() + 16 * 2, 2048),
                    "read back at most every distinct block written: " + s.readBack());
            assertEquals(s.readBack(), s.exact(), "every block read back holds its last acknowledged write");
            assertEquals(0, v.r2ts(), "4 KiB writes go as immediate data");
        }
        JsonNode j = new ObjectMapper().readTree(json.toFile());
        assertEquals(report.total(false).ios(), j.at("/total/write/ios").asLong());
        assertEquals(2, j.at("/volumes").size());
        assertTrue(j.at("/total/write/latency_us/p99").asDouble() >= j.at("/total/write/latency_us/p50").asDouble());
    }

    @Test
    @Order(2)
    void randomReadsOfTheWrittenRegionVerify() throws Exception {
        JobSpec spec = JobSpec.parse("--url", url(VOL_A), "--rw", "randread", "--bs", "4k", "--iodepth", "16",
                "--runtime", "3s", "--ramp", "500ms", "--span", "8M", "--seed", "12", "--verify");
        Report report = LoadGenerator.run(spec);
        System.out.print(report.table());
        assertEquals(0, report.errors(), report.table());
        assertEquals(0, report.mismatches(), report.table());
        assertCountsConsistent(report, 4096);
        VolumeResult v = report.volumes().get(0);
        VolumeResult.VerifyStats s = v.verify();
        assertTrue(s.otherGeneration() > 0, "blocks written by the previous job are found intact: " + s);
        assertTrue(v.read().ios() <= s.otherGeneration() + s.zeros(), "every counted read was checked");
        assertEquals(0, s.exact(), "this job wrote nothing, so it expects no exact generation");
    }

    @Test
    @Order(3)
    void largeWritesGoThroughR2TAndMixedLoadVerifies() throws Exception {
        JobSpec seq = JobSpec.parse("--url", url(VOL_B), "--rw", "write", "--bs", "1M", "--iodepth", "4",
                "--size", "24M", "--span", "16M", "--verify");
        Report r = LoadGenerator.run(seq);
        System.out.print(r.table());
        assertEquals(0, r.errors(), r.table());
        assertEquals(0, r.mismatches(), r.table());
        VolumeResult v = r.volumes().get(0);
        assertEquals(24, v.write().ios(), "--size 24M in 1M writes");
        assertTrue(v.r2ts() >= 24, "the 768 KiB beyond the first burst of each write is solicited: " + v.r2ts());
        assertEquals(16, v.verify().readBack(), "sequential writes wrapped around the 16 blocks of the span");
        assertEquals(16, v.verify().exact());

        JobSpec mixed = JobSpec.parse("--url", url(VOL_B), "--rw", "randrw", "--rwmixread", "70", "--bs", "8k",
                "--iodepth", "8", "--runtime", "2s", "--span", "1M", "--verify");
        Report m = LoadGenerator.run(mixed);
        System.out.print(m.table());
        assertEquals(0, m.errors(), m.table());
        assertEquals(0, m.mismatches(), m.table());
        VolumeResult mv = m.volumes().get(0);
        assertTrue(mv.read().ios() > mv.write().ios(), "70 % reads");
        assertTrue(mv.verify().exact() > 0, "reads after this job's own writes see their exact generation");
    }

    @Test
    @Order(4)
    void chapLoginWithTheRightSecretAndRefusalWithAWrongOne() throws Exception {
        String good = "iscsi://bench%bench-secret-1@127.0.0.1:" + server.port() + "/" + VOL_CHAP + "/0";
        String bad = "iscsi://bench%wrong-secret-1@127.0.0.1:" + server.port() + "/" + VOL_CHAP + "/0";
        try (IscsiInitiator initiator = new IscsiInitiator(1, IscsiInitiator.DEFAULT_NAME)) {
            IscsiSession s = initiator.login(IscsiUrl.parse(good), 5000).get(10, TimeUnit.SECONDS);
            assertEquals(SIZE, s.readCapacity().get(10, TimeUnit.SECONDS).bytes());
            s.logout(5000).get(10, TimeUnit.SECONDS);
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> initiator.login(IscsiUrl.parse(bad), 5000).get(10, TimeUnit.SECONDS));
            assertEquals(0x0201, assertInstanceOf(LoginException.class, e.getCause()).status(), e.getMessage());
            ExecutionException none = assertThrows(ExecutionException.class, () -> initiator.login(
                    IscsiUrl.parse(url(VOL_CHAP)), 5000).get(10, TimeUnit.SECONDS));
            assertInstanceOf(LoginException.class, none.getCause());
        }
    }

    @Test
    @Order(5)
    void unknownTargetFailsTheJobWithTheLoginStatus() {
        JobSpec spec = JobSpec.parse("--url", url("iqn.2026-11.io.fastblock:nope"), "--runtime", "1s");
        ExecutionException e = assertThrows(ExecutionException.class, () -> LoadGenerator.run(spec));
        LoginException le = assertInstanceOf(LoginException.class, e.getCause());
        assertEquals(0x0203, le.status(), le.getMessage());
        assertEquals(0, server.sessionCount(), "every job logged out, the refused login left nothing");
    }
}
