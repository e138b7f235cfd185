package io.fastblock.local;

import static io.fastblock.local.VolumeChecks.MIB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
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
import org.junit.jupiter.api.io.TempDir;

/**
 * Storage servers die and come back under a real cluster (all processes, namenode-driven chain
 * repair, catch-up): data written before, during and after the failures is what every initiator
 * read and every replica returns, including after the whole cluster restarts on its directory.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class NodeFailureIT {
    private static final long VOLUME = 256 * MIB;
    private static final int DATA = (int) (64 * MIB);

    @TempDir
    static Path dir;

    private static LocalClusterConfig config;
    private static LocalCluster cluster;
    private static byte[] current;

    @BeforeAll
    static void up() throws Exception {
        config = TestClusters.onFreePorts(dir.resolve("var"), "--chunk-size=16M", "--no-demo");
        cluster = LocalCluster.start(config, LocalCluster.defaultClasspath(), System.out);
        NamenodeAdmin admin = cluster.admin();
        assertEquals(201, admin.createVolume("vf", "256M", "16M").status());
        assertEquals(201, admin.createOpenExport("vf").status());
    }

    @AfterAll
    static void down() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static void writeNewPattern(long seed) throws Exception {
        byte[] p = new byte[DATA];
        new Random(seed).nextBytes(p);
        Path f = dir.resolve("pattern-" + seed + ".raw");
        Files.write(f, p);
        VolumeChecks.write(cluster, "vf", f);
        Files.delete(f);
        current = p;
    }

    @Test
    @Order(1)
    void dataWrittenWithAllReplicasReadsBack() throws Exception {
        writeNewPattern(1);
        VolumeChecks.assertReadsBack(cluster, "vf", current, VOLUME, dir);
        VolumeChecks.assertReplicasHold(cluster.admin(), "vf", current, 3);
    }

    @Test
    @Order(2)
    void oneServerKilledTheChainsShrinkAndWritesGoOn() throws Exception {
        cluster.processes().get("storage-3").kill();
        VolumeChecks.awaitGroups(cluster.admin(), g -> !VolumeChecks.hasMember(g, "storage-3"), 60,
                "storage-3 removed");
        writeNewPattern(2);
        VolumeChecks.assertReadsBack(cluster, "vf", current, VOLUME, dir);
        VolumeChecks.assertReplicasHold(cluster.admin(), "vf", current, 2);
    }

    @Test
    @Order(3)
    void theServerComesBackCatchesUpAndHoldsTheLatestData() throws Exception {
        cluster.restart("storage-3");
        VolumeChecks.awaitGroups(cluster.admin(), VolumeChecks::healed, 120, "3 members, nobody joining");
        VolumeChecks.assertReadsBack(cluster, "vf", current, VOLUME, dir);
        VolumeChecks.assertReplicasHold(cluster.admin(), "vf", current, 3);
    }

    @Test
    @Order(4)
    void aLoneSurvivorKeepsServingAndTheClusterRestartsWhole() throws Exception {
        cluster.processes().get("storage-2").kill();
        cluster.processes().get("storage-3").kill();
        VolumeChecks.awaitGroups(cluster.admin(), g -> g.get("members").size() == 1, 60, "storage-1 alone");
        writeNewPattern(3);
        VolumeChecks.assertReadsBack(cluster, "vf", current, VOLUME, dir);

        cluster.close();
        cluster = LocalCluster.start(config, LocalCluster.defaultClasspath(), System.out);
        VolumeChecks.awaitGroups(cluster.admin(), VolumeChecks::healed, 180, "3 members, nobody joining");
        VolumeChecks.assertReadsBack(cluster, "vf", current, VOLUME, dir);
        VolumeChecks.assertReplicasHold(cluster.admin(), "vf", current, 3);
    }

    /**
     * A storage server dies under a running initiator, once during a write and once during a
     * read: the gateway retries across the chain repair within the initiator's 15 s abort timer,
     * so qemu-img sees no error, and the data is what it wrote.
     */
    @Test
    @Order(5)
    void theInitiatorSeesNoErrorWhileAServerDiesUnderItsIo() throws Exception {
        NamenodeAdmin admin = cluster.admin();
        VolumeChecks.awaitGroups(admin, VolumeChecks::healed, 180, "3 members, nobody joining");

        byte[] p = new byte[DATA];
        new Random(5).nextBytes(p);
        Path f = dir.resolve("pattern-5.raw");
        Files.write(f, p);
        Path gatewayLog = cluster.processes().get("gateway").logFile();
        long logMark = Files.size(gatewayLog);
        // Rate-limited, so the kill lands inside the I/O however fast the machine is (unlimited, a 64 MiB
        // write took over a second on one VM and under one on another).
        ExternalCommand.Result w = acrossKill("storage-2", 1000, "write", "qemu-img", "convert", "-n", "-r", "16M",
                "-f", "raw", "-O", "raw", f.toString(), cluster.iscsiUrl("vf"));
        List<Long> writeWaits = recoveredWaits(gatewayLog, logMark);
        System.out.println("write pieces resent after the kill: " + writeWaits.size() + ", longest wait "
                + writeWaits.stream().mapToLong(Long::longValue).max().orElse(0) + " ms");
        assertFalse(writeWaits.isEmpty(), "no write was resent: the kill did not cross the initiator's I/O");
        Files.delete(f);
        current = p;
        VolumeChecks.assertReadsBack(cluster, "vf", current, VOLUME, dir);
        cluster.restart("storage-2");
        VolumeChecks.awaitGroups(admin, VolumeChecks::healed, 180, "3 members, nobody joining");
        VolumeChecks.assertReplicasHold(admin, "vf", current, 3);

        Path out = dir.resolve("vf-read-across-kill.raw");
        logMark = Files.size(gatewayLog);
        acrossKill("storage-1", 150, "read", "qemu-img", "convert", "-r", "64M", "-f", "raw", "-O", "raw",
                cluster.iscsiUrl("vf"), out.toString());
        List<Long> readWaits = recoveredWaits(gatewayLog, logMark);
        System.out.println("read pieces resent after the kill: " + readWaits.size() + ", longest wait "
                + readWaits.stream().mapToLong(Long::longValue).max().orElse(0) + " ms");
        try {
            VolumeChecks.assertImageHolds(out, "vf", current, VOLUME);
        } finally {
            Files.delete(out);
        }
    }

    /**
     * Runs an initiator command, kill -9s {@code node} after {@code delayMs} while the command is
     * still running, and asserts the command then finishes without error.
     */
    private static ExternalCommand.Result acrossKill(String node, long delayMs, String what, String... command)
            throws Exception {
        long t0 = System.nanoTime();
        CompletableFuture<ExternalCommand.Result> running = inBackground(() -> ExternalCommand.run(120, command));
        Thread.sleep(delayMs);
        assertFalse(running.isDone(), "the " + what + " finished before the kill: nothing was tested");
        cluster.processes().get(node).kill();
        long killedAt = System.nanoTime();
        ExternalCommand.Result r = running.get(150, TimeUnit.SECONDS);
        System.out.printf("%s across the kill of %s: killed at %d ms, qemu-img done %d ms after the kill%n",
                what, node, ms(killedAt - t0), ms(System.nanoTime() - killedAt));
        assertEquals(0, r.exitCode(), "qemu-img saw an error while " + node + " died:\n" + r.output());
        return r;
    }

    private static final Pattern RECOVERED = Pattern.compile("succeeded at \\S+ on attempt \\d+, (\\d+) ms after");

    /** How long each piece the gateway resent waited, from its log past {@code mark}. */
    private static List<Long> recoveredWaits(Path log, long mark) throws Exception {
        byte[] all = Files.readAllBytes(log);
        String since = new String(all, (int) Math.min(mark, all.length), (int) Math.max(0, all.length - mark),
                StandardCharsets.UTF_8);
        List<Long> waits = new ArrayList<>();
        Matcher m = RECOVERED.matcher(since);
        while (m.find()) {
            waits.add(Long.parseLong(m.group(1)));
            int eol = since.indexOf('\n', m.end());
            System.out.println("  gateway: " + since.substring(since.lastIndexOf('\n', m.start()) + 1,
                    eol < 0 ? since.length() : eol));
        }
        return waits;
    }

    private interface Command {
        ExternalCommand.Result run() throws Exception;
    }

    private static CompletableFuture<ExternalCommand.Result> inBackground(Command c) {
        CompletableFuture<ExternalCommand.Result> f = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                f.complete(c.run());
            } catch (Throwable e) {
                f.completeExceptionally(e);
            }
        }, "initiator");
        t.setDaemon(true);
        t.start();
        return f;
    }

    private static long ms(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }
}
