package io.fastblock.local;

import static io.fastblock.local.VolumeChecks.MIB;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.fastblock.bench.JobSpec;
import io.fastblock.bench.LoadGenerator;
import io.fastblock.bench.Report;
import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Issue 5's acceptance, all real processes: a 3-server ZooKeeper ensemble, 2 namenodes, 5 storage
 * servers in 3 racks and the iSCSI gateway, with the bench load generator writing verified data
 * through the gateway while processes are killed with SIGKILL:
 * <ol>
 *   <li>the leader namenode dies under sequential writes that keep allocating new chunks: I/O goes on
 *       and the longest a write waited (the gap) is under 10 s;</li>
 *   <li>a storage server dies under random writes: no I/O error; its groups wait for it (down/out
 *       interval, {@value #REPLACE_AFTER_MS} ms here) and are then back to 3 live members in 3 distinct
 *       racks, every affected chunk is identical on its 3 replicas, the volume verifies; random writes
 *       while they re-replicate are measured against the same writes once healed (reported);</li>
 *   <li>the ZooKeeper leader dies under writes, random ones to allocated chunks and sequential ones that keep the
 *       leader allocating chunks of a second volume: no I/O error, every storage server keeps its session,
 *       the namenode still creates volumes;</li>
 *   <li>a storage server killed under writes comes back after 30 s, inside the interval: nobody replaced
 *       it, it rejoins exactly its own groups and catches up by delta; the bytes its catch-ups copied
 *       are reported per group, and in the groups where it was head or middle they are far below what
 *       those groups hold (a full copy). Its tail groups are copied whole (the tail's log-structured
 *       copy records no per-chunk sequence yet), reported, not asserted.</li>
 * </ol>
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterAcceptanceIT {
    private static final String VOLUME = "acc";
    /** Step 5's second volume, created and deleted there. */
    private static final String FRESH = "acc-fresh";
    private static final long VOLUME_BYTES = 2048 * MIB;
    private static final long CHUNK = 4 * MIB;
    private static final long GAP_LIMIT_MS = 10_000;
    /**
     * The namenodes' down/out interval: longer than step 6's 30 s outage (plus the 5 s session
     * timeout), so that server is waited for, and short enough for step 3's replacement to start soon.
     */
    private static final long REPLACE_AFTER_MS = 40_000;

    /** Kept after the run (in target/) so a failure can be read in the servers' own logs. */
    private static final Path dir = Path.of("target", "cluster-acceptance").toAbsolutePath();
    private static LocalClusterConfig config;
    private static LocalCluster cluster;
    /** Bytes from offset 0 that hold bench-written data (the random-write phases stay inside it). */
    private static long written;
    private static String killedInStep3;
    private static Set<Integer> affectedInStep3 = Set.of();

    @BeforeAll
    static void up() throws Exception {
        deleteRecursively(dir);
        int zk = FreePorts.consecutive(3);
        int peers = FreePorts.consecutive(6);
        int namenodes = FreePorts.consecutive(2);
        int storage = FreePorts.consecutive(5);
        int iscsi = FreePorts.consecutive(1);
        config = LocalClusterConfig.fromArgs("--data-dir=" + dir.resolve("var"), "--zk-servers=3",
                "--zk-port=" + zk, "--zk-peer-port=" + peers, "--namenodes=2", "--namenode-port=" + namenodes,
                "--storage-count=5", "--storage-port=" + storage, "--racks=3", "--iscsi-port=" + iscsi,
                "--chunk-size=4M", "--no-demo", "--child-heap=192m",
                // re-replication paced slowly enough that step 3 can measure foreground I/O while it runs
                // (a 10 s window) and fast enough that step 3's heal does not dominate the suite (at 8M it
                // copied for 116 s); checkpoints 5 s apart (the default is 30 s) so that step 5's chunks
                // turn clean within its wait
                "--storage-args=--copy-rate=16M --checkpoint-ms=5000", "--namenode-args=--replace-after-ms=" + REPLACE_AFTER_MS);
        cluster = LocalCluster.start(config, LocalCluster.defaultClasspath(), System.out);
        NamenodeAdmin admin = cluster.admin();
        assertEquals(201, admin.createVolume(VOLUME, "2G", "4M").status());
        assertEquals(201, admin.createOpenExport(VOLUME).status());
    }

    @AfterAll
    static void down() {
        if (cluster != null) {
            cluster.close();
        }
    }

    /**
     * Every group spans the 3 racks: with 5 nodes in racks of 2, 2 and 1, one group per node cannot
     * (a rack of 2 would need 6 of the 5 groups), so the layout forms 3 groups per node from triples
     * of the 3 racks (the rack-of-1 node is in every group), each node head, middle and tail equally often.
     */
    @Test
    @Order(1)
    void groupsSpreadOverRacksAndHosts() throws Exception {
        VolumeChecks.awaitGroups(cluster.admin(), g -> healedAcrossDomains(g, Map.of()), 60, "3 live members, 3 hosts");
        Map<Integer, Integer> racks = rackCounts();
        System.out.println("racks per group: " + racks);
        assertTrue(racks.size() >= config.storageCount(), "at least one group per storage server: " + racks);
        assertTrue(racks.values().stream().allMatch(n -> n == 3), "every group spans 3 racks: " + racks);
    }

    @Test
    @Order(2)
    void killingTheLeaderNamenodeUnderIoStallsItLessThanTenSeconds() throws Exception {
        NamenodeAdmin admin = cluster.admin();
        // Sequential writes: a new 4 MiB chunk every 16 writes, each allocated by the leader namenode.
        CompletableFuture<Report> io = bench("--rw", "write", "--bs", "256k", "--iodepth", "4", "--runtime", "30s",
                "--span", Long.toString(VOLUME_BYTES), "--seed", "1");
        Thread.sleep(10_000);
        assertFalse(io.isDone(), "the load ended before the kill");
        String leaderUrl = admin.get("/v1/status").body().get("namenode").get("leaderUrl").asText();
        String leader = namenodeProcess(leaderUrl);
        int allocatedAtKill = allocatedChunks();
        cluster.processes().get(leader).kill();
        long killedAt = System.nanoTime();
        Report r = io.get(120, TimeUnit.SECONDS);
        long maxWaitMs = TimeUnit.NANOSECONDS.toMillis(r.total(false).latency().max());
        int allocatedAfter = allocatedChunks();
        System.out.printf("namenode leader %s killed %.1f s into the load; writes: %d I/Os, %.1f MB/s, longest"
                        + " write %d ms (the I/O gap); chunks allocated %d at the kill, %d after%n", leader,
                10.0, r.total(false).ios(), r.total(false).bytes() / 1e6 / (r.totalNanos() / 1e9), maxWaitMs,
                allocatedAtKill, allocatedAfter);
        assertEquals(0, r.errors(), "I/O errors across the namenode failover: " + errorSamples(r));
        assertEquals(0, r.mismatches());
        assertTrue(allocatedAfter > allocatedAtKill, "no chunk was allocated after the kill: the failover was not"
                + " exercised by the load");
        assertTrue(maxWaitMs < GAP_LIMIT_MS, "a write waited " + maxWaitMs + " ms across the namenode failover");
        written = Math.min(VOLUME_BYTES, (long) allocatedAfter * CHUNK);
        cluster.restart(leader); // two namenodes again for what follows
        System.out.printf("namenode %s back %.1f s after its kill%n", leader, (System.nanoTime() - killedAt) / 1e9);
    }

    @Test
    @Order(3)
    void killingAStorageServerUnderIoHealsToThreeRacksAndTheDataVerifies() throws Exception {
        NamenodeAdmin admin = cluster.admin();
        CompletableFuture<Report> io = bench("--rw", "randwrite", "--bs", "64k", "--iodepth", "4", "--runtime", "25s",
                "--span", Long.toString(written), "--seed", "2");
        Thread.sleep(6_000);
        assertFalse(io.isDone(), () -> "the load ended before the kill: " + errorSamples(io.join()));
        String victim = busiestNode(Set.of());
        Map<Integer, Integer> racksBefore = rackCounts();
        Set<Integer> affected = groupsOf(victim);
        cluster.processes().get(victim).kill();
        long killedAt = System.nanoTime();
        killedInStep3 = victim;
        Report r = io.get(120, TimeUnit.SECONDS);
        System.out.printf("%s killed under random writes: %d I/Os, longest write %d ms, errors %d%n", victim,
                r.total(false).ios(), TimeUnit.NANOSECONDS.toMillis(r.total(false).latency().max()), r.errors());
        assertEquals(0, r.errors(), "I/O errors while a storage server died: " + errorSamples(r));
        assertEquals(0, r.mismatches());

        // Inside the interval: the victim is out of its chains, shown as down, and nobody replaces it yet.
        JsonNode down = awaitDown(victim);
        long sinceKillMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
        System.out.printf("%.1f s after the kill: %s%n", sinceKillMs / 1e3, down);
        if (sinceKillMs < REPLACE_AFTER_MS) {
            assertEquals("waiting", down.get("state").asText(), down.toString());
            for (JsonNode g : admin.get("/v1/groups").body().get("groups")) {
                if (affected.contains(g.get("id").asInt())) {
                    assertFalse(g.path("joining").isObject(), "replaced inside the down/out interval: " + g);
                    assertFalse(VolumeChecks.hasMember(g, victim), "still in its chain: " + g);
                }
            }
        }

        Report reReplicating = foregroundIoWhileReReplicating();
        VolumeChecks.awaitGroups(admin, g -> healedAcrossDomains(g, racksBefore) && !VolumeChecks.hasMember(g, victim),
                240, "3 live members on 3 hosts, in as many racks as before, without " + victim);
        System.out.printf("groups healed %.1f s after the kill (interval %d ms; %d groups had %s)%n",
                (System.nanoTime() - killedAt) / 1e9, REPLACE_AFTER_MS, affected.size(), victim);
        // The baseline: the same writes on the healed cluster, with the same live servers as while it
        // re-replicated. (Taken before the kill, right after step 2, it measured 173 and 161 IOPS in two
        // runs, against 119 and 199 while re-replicating: no steady baseline there; why was not looked into.)
        Report healed = bench("--rw", "randwrite", "--bs", "64k", "--iodepth", "4", "--runtime", "10s",
                "--span", Long.toString(written), "--seed", "7").get(120, TimeUnit.SECONDS);
        assertEquals(0, healed.errors(), errorSamples(healed));
        double baseIops = healed.total(false).ios() * 1e9 / healed.totalNanos();
        double iops = reReplicating.total(false).ios() * 1e9 / reReplicating.totalNanos();
        System.out.printf("foreground random writes: %.0f IOPS healed, %.0f IOPS while re-replicating (%.0f %%)%n",
                baseIops, iops, 100 * iops / baseIops);
        affectedInStep3 = affected;
        verifyWholeVolume(3);
    }

    /**
     * Every chunk of the groups the dead server was in is identical on its 3 replicas after healing.
     * It once found a joiner holding an older write of a block written while its catch-up copied that
     * range (the tail listed its chunks before it knew of the joiner and did not forward that write);
     * the tail now re-reads the group after a ZooKeeper sync and lists only for a joiner it knows, and
     * a joiner announces only if the group record was not written during its copy.
     */
    @Test
    @Order(4)
    void theAffectedChunksAreIdenticalOnTheirThreeReplicas() throws Exception {
        int compared = assertAffectedChunksIdentical(affectedInStep3);
        System.out.printf("%d chunks of the affected groups identical on their 3 replicas%n", compared);
        assertTrue(compared > 0, "the killed server held none of the volume's chunks: nothing was tested");
    }

    @Test
    @Order(5)
    void losingTheZooKeeperLeaderIsSurvived() throws Exception {
        String zkLeader = null;
        for (int i = 0; i < config.zkServers(); i++) {
            ZooKeeperPeer.Server s = config.zkEnsemble().get(i);
            if (ZooKeeperPeer.mode(s.host(), s.clientPort()).filter("leader"::equals).isPresent()) {
                zkLeader = LocalCluster.zookeeperName(i + 1);
            }
        }
        assertTrue(zkLeader != null, "no ZooKeeper server says it leads");
        int liveBefore = liveNodes();
        NamenodeAdmin admin = cluster.admin();
        // A second volume written sequentially in 1 MiB chunks keeps the leader allocating (a new chunk
        // every 4 writes; its 512 chunks take far longer than the election) while ZooKeeper elects and
        // the namenodes regain leadership: an allocation in flight then once stalled the namenode for
        // 30 s and failed writes. This end-to-end run only sometimes meets that moment (twice not,
        // against the old namenode); the namenode's ZooKeeperLeaderLossIT meets it every time.
        assertEquals(201, admin.createVolume(FRESH, "512M", "1M").status());
        assertEquals(201, admin.createOpenExport(FRESH).status());
        try {
            CompletableFuture<Report> io = bench("--rw", "randwrite", "--bs", "64k", "--iodepth", "4", "--runtime",
                    "20s", "--span", Long.toString(written), "--seed", "4");
            CompletableFuture<Report> fresh = benchOn(FRESH, "--rw", "write", "--bs", "256k", "--iodepth", "4",
                    "--size", "512M", "--seed", "41");
            Thread.sleep(5_000);
            int allocatedAtKill = allocatedChunks(FRESH);
            cluster.processes().get(zkLeader).kill();
            long killedAt = System.nanoTime();
            // Asked while the writes go on, from the kill: the minute is the namenode's, not the time the
            // writes take (on a slow machine 1 GiB of sequential writes alone outlasted it, and the
            // first call came after the deadline).
            long deadline = killedAt + TimeUnit.SECONDS.toNanos(60);
            String last = "no call answered";
            int status = 0;
            while (System.nanoTime() < deadline && status != 201) {
                // A call that times out while ZooKeeper elects is "not yet", like a 503: only the
                // minute after the kill is the bound.
                try {
                    NamenodeAdmin.Reply reply = admin.createVolume("after-zk-leader", "1G", null);
                    status = reply.status();
                    last = status + " " + reply.errorCode();
                } catch (java.net.http.HttpTimeoutException e) {
                    last = e.toString();
                }
                if (status != 201) {
                    Thread.sleep(500);
                }
            }
            long createdAfter = System.nanoTime() - killedAt;
            Report r = io.get(120, TimeUnit.SECONDS);
            Report f = fresh.get(180, TimeUnit.SECONDS);
            System.out.printf("ZooKeeper leader %s killed under writes: %d I/Os, longest write %d ms, errors %d;"
                            + " sequential writes to new chunks: %d I/Os, longest write %d ms, errors %d, chunks"
                            + " allocated %d at the kill%n",
                    zkLeader, r.total(false).ios(), TimeUnit.NANOSECONDS.toMillis(r.total(false).latency().max()),
                    r.errors(), f.total(false).ios(), TimeUnit.NANOSECONDS.toMillis(f.total(false).latency().max()),
                    f.errors(), allocatedAtKill);
            assertEquals(0, r.errors(), "I/O errors while the ZooKeeper leader died: " + errorSamples(r));
            assertEquals(0, r.mismatches());
            assertEquals(0, f.errors(), "I/O errors on new chunks while the ZooKeeper leader died: " + errorSamples(f));
            assertTrue(allocatedAtKill < 512, "the new volume was fully allocated before the kill: its allocations"
                    + " did not span the election");
            System.out.printf("the namenode created a volume %d ms after the ZooKeeper leader died%n",
                    TimeUnit.NANOSECONDS.toMillis(createdAfter));
            assertEquals(201, status, "the namenode creates volumes again within a minute after the ZooKeeper leader"
                    + " died; last answer: " + last + "; namenode logs:\n" + namenodeTails());
            assertEquals(liveBefore, liveNodes(), "storage servers keep their sessions");
            assertEquals(512, allocatedChunks(FRESH), "every chunk of the new volume allocated");
        } finally {
            // Later steps need the whole ensemble whatever happened here, and not the second volume
            // (their re-replication would copy it too).
            cluster.restart(zkLeader);
            admin.delete("/v1/volumes/" + FRESH);
        }
    }

    private static String namenodeTails() {
        StringBuilder out = new StringBuilder();
        for (var e : cluster.processes().entrySet()) {
            if (e.getKey().startsWith("namenode")) {
                out.append("--- ").append(e.getKey()).append('\n').append(e.getValue().tail()).append('\n');
            }
        }
        return out.toString();
    }

    @Test
    @Order(6)
    void aServerBackAfterThirtySecondsCatchesUp() throws Exception {
        // The server killed in step 3 stayed away while step 4 ran; another member dies now, under writes.
        String away = killedInStep3;
        String victim = busiestNode(Set.of(away));
        Set<Integer> own = groupsOf(victim);
        Set<Integer> tailOf = tailOf(victim);
        Path log = cluster.processes().get(victim).logFile();
        // The kill lands under writes to a hot set (the first 2 chunks). A chunk written within the
        // storage server's last two chunk flushes (5 s apart here, --checkpoint-ms) before a crash has no trusted sequence
        // and is copied whole on return; every other chunk catches up by delta. Step 5's writes
        // covered every chunk: give them the time to turn clean first.
        Thread.sleep(15_000);
        long hot = Math.min(written, 2 * CHUNK);
        CompletableFuture<Report> io = bench("--rw", "randwrite", "--bs", "64k", "--iodepth", "4", "--runtime", "12s",
                "--span", Long.toString(hot), "--seed", "5");
        Thread.sleep(3_000);
        cluster.processes().get(victim).kill();
        long killedAt = System.nanoTime();
        Report during = io.get(120, TimeUnit.SECONDS);
        assertEquals(0, during.errors(), "I/O errors while " + victim + " died: " + errorSamples(during));
        assertEquals(0, during.mismatches());
        // While it is away, scattered small writes elsewhere: what its delta catch-up must bring back.
        Report away1 = bench("--rw", "randwrite", "--bs", "4k", "--iodepth", "1", "--runtime", "5s",
                "--offset", Long.toString(4 * CHUNK), "--span", Long.toString(Math.max(CHUNK, written - 4 * CHUNK)),
                "--seed", "9").get(120, TimeUnit.SECONDS);
        assertEquals(0, away1.errors(), errorSamples(away1));
        System.out.printf("while %s was away: %d writes of 4 KiB outside the hot set%n", victim,
                away1.total(false).ios());
        long left = TimeUnit.SECONDS.toNanos(30) - (System.nanoTime() - killedAt);
        if (left > 0) {
            Thread.sleep(TimeUnit.NANOSECONDS.toMillis(left));
        }
        JsonNode down = awaitDown(victim);
        assertEquals("waiting", down.get("state").asText(), "30 s after the kill the groups still wait: " + down);
        long mark = Files.size(log);
        cluster.restart(victim);
        cluster.restart(away);
        Map<Integer, Integer> racksNow = rackCounts();
        VolumeChecks.awaitGroups(cluster.admin(), g -> healedAcrossDomains(g, racksNow)
                        && (!own.contains(g.get("id").asInt()) || VolumeChecks.hasMember(g, victim)), 300,
                "3 live members on 3 hosts, " + victim + " back in its groups " + own);
        // Its own groups again (it may also be in groups formed meanwhile for the server back from step 3).
        Set<Integer> now = groupsOf(victim);
        assertTrue(now.containsAll(own), victim + " rejoined its own groups " + own + ", is in " + now);
        String after = since(log, mark);
        long copied = 0;
        int catchUps = 0;
        Map<Integer, Long> copiedIn = new java.util.TreeMap<>();
        Matcher m = CAUGHT_UP.matcher(after);
        while (m.find()) {
            copiedIn.merge(Integer.parseInt(m.group(1)), Long.parseLong(m.group(2)), Long::sum);
            copied += Long.parseLong(m.group(2));
            catchUps++;
        }
        int chunks = 0;
        int byDelta = 0;
        Matcher p = PLANNED.matcher(after);
        StringBuilder plans = new StringBuilder();
        while (p.find()) {
            chunks += Integer.parseInt(p.group(2));
            byDelta += Integer.parseInt(p.group(3));
            plans.append(String.format("%n  %s", p.group(1)));
        }
        long held = 0;
        long heldInPlace = 0;
        long copiedInPlace = 0;
        StringBuilder perGroup = new StringBuilder();
        for (JsonNode g : cluster.admin().get("/v1/groups").body().get("groups")) {
            int id = g.get("id").asInt();
            if (own.contains(id)) {
                long h = chunksIn(id) * CHUNK;
                long c = copiedIn.getOrDefault(id, 0L);
                held += h;
                if (!tailOf.contains(id)) {
                    heldInPlace += h;
                    copiedInPlace += c;
                }
                perGroup.append(String.format("%n  group %d (%s at the kill): copied %d of %d bytes", id,
                        tailOf.contains(id) ? "tail" : "head/middle", c, h));
            }
        }
        System.out.printf("%s back after %.1f s: %d catch-up(s) copied %d bytes (%d of %d chunks by delta); its"
                        + " groups hold %d allocated bytes of this volume (a full copy): %.1f %%%n", victim,
                (System.nanoTime() - killedAt) / 1e9, catchUps, copied, byDelta, chunks, held,
                held == 0 ? 0.0 : 100.0 * copied / held);
        System.out.printf("in the groups where it was head or middle: copied %d of %d bytes (%.1f %%)%s%n",
                copiedInPlace, heldInPlace, heldInPlace == 0 ? 0.0 : 100.0 * copiedInPlace / heldInPlace, perGroup);
        assertTrue(catchUps >= own.size(), "a catch-up per group it rejoined: " + catchUps + " for " + own);
        assertTrue(heldInPlace > 0, "its head/middle groups hold none of the volume: nothing was tested");
        assertTrue(byDelta > 0, "no chunk caught up by delta");
        // Where it kept chunks in place (head, middle) the catch-up is a delta, far below a full copy.
        // Where it was the tail the chunks are copied whole: the tail's log-structured copy records no
        // per-chunk sequence yet (storage side; reported above, not asserted).
        // The plans say why chunks went whole (the storage server logs the reasons with them).
        assertTrue(copiedInPlace * 4 < heldInPlace, "catch-up copied " + copiedInPlace + " bytes, not far below a"
                + " full copy of " + heldInPlace + perGroup + "\nits plans:" + plans);
        verifyWholeVolume(6);
    }

    /**
     * Benchmark-style, reported not asserted (timings on a shared 2-core machine): random writes for
     * 10 s while the dead server's groups are re-replicated (catch-up copies paced by the storage
     * servers' --copy-rate, at most --max-concurrent-joins at once); step 3 then runs the same writes
     * on the healed cluster. Once a step with a kill of its own; measured inside step 3's heal it
     * costs no second down/out interval.
     */
    private static Report foregroundIoWhileReReplicating() throws Exception {
        NamenodeAdmin admin = cluster.admin();
        // Replacement starts once the down/out interval has run out.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60) + TimeUnit.MILLISECONDS.toNanos(REPLACE_AFTER_MS);
        while (joining(admin) == 0 && System.nanoTime() < deadline) {
            Thread.sleep(200);
        }
        assertTrue(joining(admin) > 0, "no re-replication started after the kill");
        CompletableFuture<Report> during = bench("--rw", "randwrite", "--bs", "64k", "--iodepth", "4", "--runtime",
                "10s", "--span", Long.toString(written), "--seed", "8");
        int samples = 0;
        int joiningSamples = 0;
        while (!during.isDone()) {
            samples++;
            joiningSamples += joining(admin) > 0 ? 1 : 0;
            Thread.sleep(500);
        }
        Report r = during.get();
        assertEquals(0, r.errors(), errorSamples(r));
        System.out.printf("a join was running in %d of %d samples of the re-replication window%n", joiningSamples,
                samples);
        return r;
    }

    private static int joining(NamenodeAdmin admin) throws Exception {
        int n = 0;
        for (JsonNode g : admin.get("/v1/groups").body().get("groups")) {
            n += g.path("joining").isObject() ? 1 : 0;
        }
        return n;
    }

    private static final Pattern CAUGHT_UP = Pattern.compile("group (\\d+): caught up from \\S+ \\((\\d+) bytes copied");
    /** A catch-up's plan line: the whole of it (with why chunks went whole), its chunks, those by delta. */
    private static final Pattern PLANNED = Pattern.compile(
            "(group \\d+: (\\d+) chunk\\(s\\) to catch up, (\\d+) by delta(?: \\(whole: \\{[^}]*\\}\\))?)");

    /** The node's entry in the status's down list, once it has one (its session expired; 60 s bound). */
    private static JsonNode awaitDown(String node) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            for (JsonNode d : cluster.admin().get("/v1/status").body().path("down")) {
                if (node.equals(d.get("id").asText())) {
                    return d;
                }
            }
            Thread.sleep(200);
        }
        throw new AssertionError(node + " never shown down in /v1/status");
    }

    // ------------------------------------------------------------------ helpers

    private static CompletableFuture<Report> bench(String... args) {
        return benchOn(VOLUME, args);
    }

    private static CompletableFuture<Report> benchOn(String volume, String... args) {
        List<String> all = new ArrayList<>(List.of("--url", cluster.iscsiUrl(volume), "--ramp", "0s", "--verify",
                "--time-limit", "3m"));
        all.addAll(List.of(args));
        JobSpec spec = JobSpec.parse(all.toArray(String[]::new));
        return CompletableFuture.supplyAsync(() -> {
            try {
                return LoadGenerator.run(spec);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
    }

    /** Reads every written byte back through the gateway; each sector must be intact bench data or zeros. */
    private static void verifyWholeVolume(int seed) throws Exception {
        Report r = bench("--rw", "read", "--bs", "1M", "--iodepth", "4", "--size", Long.toString(written),
                "--span", Long.toString(written), "--seed", Integer.toString(seed)).get(180, TimeUnit.SECONDS);
        System.out.printf("read back %d MB through the gateway: errors %d, mismatches %d%n",
                r.total(true).bytes() / 1_000_000, r.errors(), r.mismatches());
        assertEquals(0, r.errors(), errorSamples(r));
        assertEquals(0, r.mismatches());
        assertTrue(r.total(true).bytes() >= written, "read " + r.total(true).bytes() + " of " + written);
    }

    private static String namenodeProcess(String url) {
        for (int i = 1; i <= config.namenodeCount(); i++) {
            if (config.namenodeUrl(i).equals(url)) {
                return LocalCluster.namenodeName(i);
            }
        }
        throw new AssertionError("no namenode at " + url);
    }

    private static int allocatedChunks() throws Exception {
        return allocatedChunks(VOLUME);
    }

    private static int allocatedChunks(String volume) throws Exception {
        return cluster.admin().get("/v1/volumes/" + volume).body().get("allocatedChunks").asInt();
    }

    private static int liveNodes() throws Exception {
        int live = 0;
        for (JsonNode n : cluster.admin().get("/v1/nodes").body().get("nodes")) {
            live += n.get("live").asBoolean() ? 1 : 0;
        }
        return live;
    }

    private static Map<String, String> racks() throws Exception {
        Map<String, String> out = new HashMap<>();
        for (JsonNode n : cluster.admin().get("/v1/nodes").body().get("nodes")) {
            out.put(n.get("id").asText(), n.path("labels").path("rack").asText(""));
        }
        return out;
    }

    /** Distinct racks among each group's members, by group id. */
    private static Map<Integer, Integer> rackCounts() throws Exception {
        Map<String, String> racks = racks();
        Map<Integer, Integer> out = new java.util.TreeMap<>();
        for (JsonNode g : cluster.admin().get("/v1/groups").body().get("groups")) {
            Set<String> seen = new HashSet<>();
            for (JsonNode m : g.get("members")) {
                seen.add(racks.get(m.get("id").asText()));
            }
            out.put(g.get("id").asInt(), seen.size());
        }
        return out;
    }

    /**
     * 3 live members (nobody joining) on 3 distinct hosts, in at least as many distinct racks as the
     * group had in {@code racksBefore}: a replacement never shares a survivor's rack when another rack
     * has room.
     */
    private static boolean healedAcrossDomains(JsonNode group, Map<Integer, Integer> racksBefore) {
        if (!VolumeChecks.healed(group)) {
            return false;
        }
        try {
            Map<String, String> racks = racks();
            Set<String> rackSet = new HashSet<>();
            Set<String> hosts = new HashSet<>();
            for (JsonNode m : group.get("members")) {
                if (!m.get("live").asBoolean()) {
                    return false;
                }
                rackSet.add(racks.get(m.get("id").asText()));
                hosts.add(m.get("id").asText());
            }
            return hosts.size() == 3 && rackSet.size() >= racksBefore.getOrDefault(group.get("id").asInt(), 0);
        } catch (Exception e) {
            return false;
        }
    }

    private static String errorSamples(Report r) {
        return r.volumes().stream().flatMap(v -> v.errorSamples().stream()).toList().toString();
    }

    private static void deleteRecursively(Path p) throws java.io.IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (var walk = Files.walk(p)) {
            for (Path q : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(q);
            }
        }
    }

    /**
     * The live storage server in the most groups, other than {@code except}, among those with another
     * live server in their rack (a server alone in its rack cannot be replaced within 3 racks).
     */
    private static String busiestNode(Set<String> except) throws Exception {
        Map<String, String> racks = racks();
        Map<String, Integer> count = new java.util.TreeMap<>();
        Map<String, Set<String>> liveByRack = new java.util.HashMap<>();
        for (JsonNode g : cluster.admin().get("/v1/groups").body().get("groups")) {
            for (JsonNode m : g.get("members")) {
                if (m.get("live").asBoolean()) {
                    liveByRack.computeIfAbsent(racks.get(m.get("id").asText()), r -> new HashSet<>())
                            .add(m.get("id").asText());
                }
            }
        }
        for (JsonNode g : cluster.admin().get("/v1/groups").body().get("groups")) {
            for (JsonNode m : g.get("members")) {
                String id = m.get("id").asText();
                if (m.get("live").asBoolean() && !except.contains(id) && liveByRack.get(racks.get(id)).size() > 1) {
                    count.merge(id, 1, Integer::sum);
                }
            }
        }
        return count.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey();
    }

    /** Groups whose tail (last member) is {@code node}. */
    private static Set<Integer> tailOf(String node) throws Exception {
        Set<Integer> out = new HashSet<>();
        for (JsonNode g : cluster.admin().get("/v1/groups").body().get("groups")) {
            JsonNode members = g.get("members");
            if (members.size() > 0 && node.equals(members.get(members.size() - 1).get("id").asText())) {
                out.add(g.get("id").asInt());
            }
        }
        return out;
    }

    private static Set<Integer> groupsOf(String node) throws Exception {
        Set<Integer> out = new HashSet<>();
        for (JsonNode g : cluster.admin().get("/v1/groups").body().get("groups")) {
            if (VolumeChecks.hasMember(g, node)) {
                out.add(g.get("id").asInt());
            }
        }
        return out;
    }

    private static long chunksIn(int groupId) throws Exception {
        long n = 0;
        for (long c = 0; c * CHUNK < written; c++) {
            JsonNode lookup = cluster.admin().get("/v1/volumes/" + VOLUME + "/chunks/" + c).body();
            if (lookup.get("allocated").asBoolean() && lookup.get("group").get("id").asInt() == groupId) {
                n++;
            }
        }
        return n;
    }

    /** Every allocated chunk in {@code groups} reads the same on all 3 members (each its own copy). */
    private static int assertAffectedChunksIdentical(Set<Integer> groups) throws Exception {
        NamenodeAdmin admin = cluster.admin();
        JsonNode vol = admin.get("/v1/volumes/" + VOLUME).body();
        long writeId = vol.path("topLayer").asLong(vol.get("id").asLong());
        long epoch = admin.get("/v1/volumes/" + VOLUME + "/lease").body().get("epoch").asLong();
        int compared = 0;
        for (long c = 0; c * CHUNK < written; c++) {
            JsonNode lookup = admin.get("/v1/volumes/" + VOLUME + "/chunks/" + c).body();
            if (!lookup.get("allocated").asBoolean() || !groups.contains(lookup.get("group").get("id").asInt())) {
                continue;
            }
            JsonNode group = lookup.get("group");
            assertEquals(3, group.get("members").size(), group.toString());
            ChainAddress chain = new ChainAddress(group.get("id").asInt(), group.get("chainVersion").asLong(), epoch);
            byte[] first = null;
            for (JsonNode member : group.get("members")) {
                byte[] copy = VolumeChecks.readReplica(member.get("host").asText(), member.get("port").asInt(), chain,
                        new ChunkId(writeId, c), (int) CHUNK);
                if (first == null) {
                    first = copy;
                } else {
                    assertArrayEquals(first, copy, "chunk " + c + " on " + member.get("id").asText());
                }
            }
            compared++;
        }
        return compared;
    }

    private static String since(Path log, long mark) throws Exception {
        byte[] all = Files.readAllBytes(log);
        int from = (int) Math.min(mark, all.length);
        return new String(all, from, all.length - from, StandardCharsets.UTF_8);
    }
}
