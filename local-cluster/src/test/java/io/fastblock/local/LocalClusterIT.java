package io.fastblock.local;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.fastblock.bench.JobSpec;
import io.fastblock.bench.LoadGenerator;
import io.fastblock.bench.Report;
import io.fastblock.bench.VolumeResult;
import io.fastblock.bench.initiator.IscsiInitiator;
import io.fastblock.bench.initiator.IscsiSession;
import io.fastblock.bench.initiator.IscsiUrl;
import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.Iqn;
import io.fastblock.protocol.Status;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.codec.BufferPoolDefaults;
import io.netty.buffer.ByteBufUtil;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * The walking skeleton end to end: real processes (namenode with embedded ZooKeeper, 3 storage
 * servers, gateway) started the way {@code make up} starts them, driven by third-party
 * initiators (libiscsi's tools, qemu-img).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class LocalClusterIT {
    private static final long MIB = 1024 * 1024;
    private static final long CHUNK = 16 * MIB;
    private static final int DATA_MIB = 64;

    @TempDir
    static Path dir;

    private static LocalClusterConfig config;
    private static LocalCluster cluster;
    private static byte[] pattern;
    private static Path patternFile;
    private static int metricsPort;

    @BeforeAll
    static void up() throws Exception {
        metricsPort = FreePorts.consecutive(1);
        config = TestClusters.onFreePorts(dir.resolve("var"), "--chunk-size=16M", "--demo-size=1G",
                "--gateway-args=--metrics-port=" + metricsPort);
        cluster = LocalCluster.start(config, LocalCluster.defaultClasspath(), System.out);
        pattern = new byte[(int) (DATA_MIB * MIB)];
        new Random(20261121).nextBytes(pattern);
        patternFile = dir.resolve("pattern.raw");
        Files.write(patternFile, pattern);
    }

    @AfterAll
    static void down() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static String portal() {
        return "iscsi://127.0.0.1:" + config.iscsiPort();
    }

    @Test
    @Order(0)
    void dataPathJvmsRunTheParallelCollectorAndUnzeroedBufferPools() throws IOException {
        int checked = 0;
        for (Map.Entry<String, ChildProcess> e : cluster.processes().entrySet()) {
            List<String> jvmArgs = List.of(ProcessHandle.of(e.getValue().pid()).orElseThrow().info().arguments().orElseThrow());
            boolean dataPath = e.getKey().startsWith("storage-") || e.getKey().equals("gateway");
            assertEquals(dataPath, jvmArgs.contains("-XX:+UseParallelGC"), e.getKey() + ": " + jvmArgs);
            assertEquals(dataPath, jvmArgs.containsAll(BufferPoolDefaults.JVM_OPTIONS), e.getKey() + ": " + jvmArgs);
            // ... and the options took: no server warns that its pools take zeroed memory.
            String log = Files.readString(e.getValue().logFile());
            assertFalse(log.contains("zeroed memory"), e.getKey() + "'s log: " + log);
            checked += dataPath ? 1 : 0;
        }
        assertEquals(4, checked, "three storage servers and the gateway: " + cluster.processes().keySet());
    }

    @Test
    @Order(1)
    void libiscsiToolsSeeTheDemoVolume() throws Exception {
        String url = cluster.iscsiUrl("demo");
        ExternalCommand.Result ls = ExternalCommand.ok(30, "iscsi-ls", "-s", portal());
        assertTrue(ls.output().contains(Iqn.forVolume("demo")), ls.output());

        ExternalCommand.Result inq = ExternalCommand.ok(30, "iscsi-inq", url);
        assertTrue(inq.output().contains("FASTBLK"), inq.output());

        ExternalCommand.Result cap = ExternalCommand.ok(30, "iscsi-readcapacity16", url);
        // 1 GiB of 512-byte blocks: last LBA 2097151
        assertTrue(cap.output().contains("2097151") || cap.output().contains("1073741824"), cap.output());
    }

    @Test
    @Order(2)
    void unknownTargetIsRejectedAtLogin() throws Exception {
        ExternalCommand.Result r = ExternalCommand.run(30, "iscsi-inq",
                "iscsi://127.0.0.1:" + config.iscsiPort() + "/" + Iqn.forVolume("no-such-volume") + "/0");
        assertNotEquals(0, r.exitCode(), r.output());
        // The gateway asks the namenode's exports first: a target nobody may reach is refused as
        // class 2 (initiator error), detail 2 (authorization failure), whether or not it exists.
        assertTrue(r.output().toLowerCase().contains("authorization failure"), r.output());
    }

    @Test
    @Order(3)
    void readBeyondTheEndGetsLbaOutOfRange() throws Exception {
        // libiscsi's own test checks CHECK CONDITION / ILLEGAL REQUEST / LBA OUT OF RANGE sense.
        ExternalCommand.Result r = ExternalCommand.run(120, "iscsi-test-cu", "-t", "SCSI.Read10.BeyondEol",
                cluster.iscsiUrl("demo"));
        assertEquals(0, r.exitCode(), r.output());
        // The test itself must have run and passed (CUnit would count a skipped test as passed too).
        assertTrue(r.output().contains("Test: BeyondEol ...passed"), r.output());
        assertTrue(r.output().matches("(?s).*tests\\s+1\\s+1\\s+1\\s+0\\s+0.*"), r.output());
        String afterTest = r.output().substring(r.output().indexOf("Test: BeyondEol"));
        assertTrue(!afterTest.contains("SKIPPED"), r.output());
    }

    @Test
    @Order(4)
    void neverWrittenRangesReadAsZerosWithoutAllocating() throws Exception {
        NamenodeAdmin admin = cluster.admin();
        createExported(admin, "sparse", "64M");
        Path out = dir.resolve("sparse.raw");
        ExternalCommand.ok(120, "qemu-img", "convert", "-f", "raw", "-O", "raw", cluster.iscsiUrl("sparse"),
                out.toString());
        byte[] back = Files.readAllBytes(out);
        assertEquals(64 * MIB, back.length);
        assertTrue(allZero(back, 0, back.length), "a never-written volume returned non-zero bytes");
        assertEquals(0, admin.get("/v1/volumes/sparse").body().get("allocatedChunks").asInt());
    }

    @Test
    @Order(5)
    void qemuImgWritesAndReadsBackAcrossChunks() throws Exception {
        NamenodeAdmin admin = cluster.admin();
        createExported(admin, "e2e", "1G");
        ExternalCommand.ok(300, "qemu-img", "convert", "-n", "-f", "raw", "-O", "raw", patternFile.toString(),
                cluster.iscsiUrl("e2e"));
        assertVolumeHoldsPattern("e2e");
        // 64 MiB at 16 MiB chunks: exactly 4 chunks, and reading the whole 1 GiB allocated no more.
        assertEquals(DATA_MIB * MIB / CHUNK, admin.get("/v1/volumes/e2e").body().get("allocatedChunks").asLong());
    }

    @Test
    @Order(6)
    void everyReplicaHoldsTheData() throws Exception {
        VolumeChecks.assertReplicasHold(cluster.admin(), "e2e", pattern, 3);
    }

    @Test
    @Order(7)
    void acknowledgedDataSurvivesKillDashNineOfEveryProcess() throws Exception {
        cluster.killAll();
        cluster = LocalCluster.start(config, LocalCluster.defaultClasspath(), System.out);
        assertVolumeHoldsPattern("e2e");
        assertEquals(200, cluster.admin().get("/v1/volumes/demo").status());
    }

    /**
     * Small sequential writes at queue depth 32 arrive together and are merged into larger storage
     * writes by the gateway (WriteCoalescer); every sector must still land where its command said.
     * The load generator's sectors name their own offset, so a merge in the wrong order or place
     * reads back as a mismatch; qemu-img (libiscsi) writes a pattern that must compare equal.
     */
    @Test
    @Order(8)
    void smallSequentialWritesAtQueueDepth32LandExactly() throws Exception {
        NamenodeAdmin admin = cluster.admin();
        createExported(admin, "seq", "64M");
        Report written = LoadGenerator.run(JobSpec.parse("--url", cluster.iscsiUrl("seq"), "--rw", "write", "--bs", "4k",
                "--iodepth", "32", "--size", "48M", "--span", "48M", "--ramp", "0s", "--verify", "--time-limit", "3m"));
        VolumeResult.VerifyStats v = written.volumes().get(0).verify();
        assertEquals(0, written.errors());
        assertEquals(0, v.mismatches());
        assertEquals(48 * 256, v.exact(), "every 4 KiB write read back as written: " + v);

        ExternalCommand.ok(120, "qemu-img", "bench", "-f", "raw", "-t", "none", "-n", "-w", "-c", "4096", "-d", "32",
                "-s", "4096", "--pattern=165", cluster.iscsiUrl("seq"));
        byte[] expected = new byte[16 << 20];
        Arrays.fill(expected, (byte) 165);
        // qemu-img bench wrote the first 16 MiB; the load generator's data stays beyond them.
        Path head = dir.resolve("seq-head.raw");
        ExternalCommand.ok(120, "qemu-img", "dd", "-f", "raw", "-O", "raw", "bs=1M", "count=16",
                "if=" + cluster.iscsiUrl("seq"), "of=" + head);
        assertArrayEquals(expected, Files.readAllBytes(head));
    }

    /** A volume of 16 MiB chunks, exported to every initiator. */
    private static void createExported(NamenodeAdmin admin, String name, String size) throws Exception {
        assertEquals(201, admin.createVolume(name, size, "16M").status());
        assertEquals(201, admin.createOpenExport(name).status());
    }

    /**
     * The gateway's meters, scraped as Prometheus would: the stream classifier's verdicts and where
     * the reads went, for random reads of the load generator and a sequential read by qemu-img.
     */
    @Test
    @Order(9)
    void theGatewayServesItsMetricsAndTheyShowHowReadsWereClassified() throws Exception {
        // A volume's meters live while a session has it open: this one holds it across the reads and the scrape.
        IscsiInitiator holder = new IscsiInitiator(1, IscsiInitiator.DEFAULT_NAME);
        IscsiSession held = holder.login(IscsiUrl.parse(cluster.iscsiUrl("e2e")), 10_000).get(30, TimeUnit.SECONDS);
        Report r = LoadGenerator.run(JobSpec.parse("--url", cluster.iscsiUrl("e2e"), "--rw", "randread", "--bs", "4k",
                "--iodepth", "8", "--span", "64M", "--runtime", "2s", "--ramp", "0s", "--seed", "9"));
        assertEquals(0, r.errors(), r.table());
        assertVolumeHoldsPattern("e2e"); // qemu-img reads the volume from start to end
        String body = scrapeGateway();
        double random = sample(body, "fastblock_gateway_requests_total{op=\"read\",pattern=\"random\",volume=\"e2e\"}");
        double sequential = sample(body, "fastblock_gateway_requests_total{op=\"read\",pattern=\"sequential\",volume=\"e2e\"}");
        assertTrue(random >= r.total(true).ios() / 2.0, "random reads counted: " + random + " of " + r.total(true).ios());
        assertTrue(sequential > 10, "qemu-img's read of the written 64 MiB counted as sequential: " + sequential);
        double head = sample(body, "fastblock_gateway_reads_total{route=\"head\",volume=\"e2e\"}");
        double middle = sample(body, "fastblock_gateway_reads_total{route=\"middle\",volume=\"e2e\"}");
        System.out.printf("gateway metrics: %.0f random and %.0f sequential reads of e2e; %.0f to the head, %.0f to the middle%n",
                random, sequential, head, middle);
        System.out.println(body.lines().filter(l -> l.startsWith("fastblock_gateway_latency_seconds")
                && l.contains("op=\"read\",volume=\"e2e\"")).collect(Collectors.joining("\n")));
        assertTrue(head > 0 && middle > 0, "reads to the head " + head + ", to the middle " + middle);
        double timed = sample(body, "fastblock_gateway_latency_seconds_count{op=\"read\",volume=\"e2e\"}");
        double underAMillisecond = sample(body,
                "fastblock_gateway_latency_seconds_bucket{op=\"read\",volume=\"e2e\",le=\"0.001\"}");
        assertTrue(timed >= random + sequential, "every read timed: " + timed);
        assertTrue(underAMillisecond > 0 && underAMillisecond <= timed, "reads under 1 ms: " + underAMillisecond);
        assertTrue(body.contains("jvm_buffer_memory_used_bytes{id=\"direct\"}"), "the JVM's direct memory is there too");

        held.logout(10_000).get(30, TimeUnit.SECONDS);
        holder.close();
        long deadline = System.nanoTime() + 10_000_000_000L;
        String after;
        do {
            Thread.sleep(100);
            after = scrapeGateway();
        } while (after.contains("volume=\"e2e\"") && System.nanoTime() < deadline);
        assertFalse(after.contains("volume=\"e2e\""), "the last session ended: the volume's meters went with it");
    }

    /** The gateway's {@code GET /metrics}, asserted to answer 200. */
    private static String scrapeGateway() throws Exception {
        HttpResponse<String> scrape = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + metricsPort + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, scrape.statusCode());
        return scrape.body();
    }

    /** The value of one series in a Prometheus text scrape. */
    private static double sample(String scrape, String series) {
        for (String line : scrape.split("\n")) {
            if (line.startsWith(series + " ")) {
                return Double.parseDouble(line.substring(series.length() + 1).trim());
            }
        }
        throw new AssertionError("no " + series + " in the scrape:\n" + scrape);
    }

    private void assertVolumeHoldsPattern(String volume) throws Exception {
        VolumeChecks.assertReadsBack(cluster, volume, pattern, 1024 * MIB, dir);
    }

    private static boolean allZero(byte[] b, int from, int to) {
        return VolumeChecks.allZero(b, from, to);
    }
}
