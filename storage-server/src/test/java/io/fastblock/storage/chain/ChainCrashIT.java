package io.fastblock.storage.chain;

import io.fastblock.storage.StorageServerConfig;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.ReadRequest;
import io.fastblock.protocol.Status;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.WriteRequest;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.NodeRecord;
import io.fastblock.protocol.meta.ZkPaths;
import io.fastblock.storage.StorageServer;
import io.fastblock.storage.net.NettyTransport;
import io.fastblock.storage.net.StorageClient;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoopGroup;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chain crash test of issue 3: three storage servers (child JVMs) in one chain, a real
 * ZooKeeper, four writers doing random 4 KiB writes through the current head the way the gateway
 * does (retrying the same content on errors and STALE_CHAIN until it is acknowledged). Every few
 * seconds the harness kills -9 the head, the middle or the tail in turn and reconfigures the
 * chain as the namenode would: it removes the node (version bump), restarts it on its data dir,
 * lets it catch up as the joining node, and makes it a member again (tail) once it has created
 * its caught-up znode. At the end every block's last acknowledged content must read back from
 * every replica. Runs once per {@link TailLayout}: 60 s for the default layout, 30 s for the other
 * ({@code -Dchaincrash.seconds} sets both). A kill waits until at least {@link #WRITES_BETWEEN_KILLS} more writes have been
 * acknowledged since the last one, so every kill hits a chain that is busy writing.
 */
class ChainCrashIT {
    private static final int GROUP = 1;
    private static final int BLOCK = 4096;
    private static final int WRITERS = 4;
    private static final int BLOCKS_PER_WRITER = 256;
    private static final List<String> NODES = List.of("n1", "n2", "n3");
    private static final int WRITES_BETWEEN_KILLS = 100;

    @TempDir
    Path dir;

    private TestingServer zkServer;
    private CuratorFramework zk;
    private final Map<String, Process> processes = new ConcurrentHashMap<>();
    private volatile GroupRecord current;
    private TailLayout layout;

    private String classPath;

    /**
     * The class path for the child JVMs, with its directories copied first: other builds in the
     * same working tree may rewrite target/classes while this test restarts servers.
     */
    private String snapshotClassPath() throws Exception {
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> out = new ArrayList<>();
        int n = 0;
        for (String entry : cp.split(java.io.File.pathSeparator)) {
            Path p = Path.of(entry);
            if (Files.isDirectory(p)) {
                Path copy = dir.resolve("cp-" + n++);
                try (var walk = Files.walk(p)) {
                    for (Path f : walk.toList()) {
                        Path target = copy.resolve(p.relativize(f).toString());
                        if (Files.isDirectory(f)) {
                            Files.createDirectories(target);
                        } else {
                            Files.copy(f, target);
                        }
                    }
                }
                out.add(copy.toString());
            } else {
                out.add(entry);
            }
        }
        return String.join(java.io.File.pathSeparator, out);
    }

    private Process launch(String node) throws Exception {
        String cp = classPath;
        ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-cp", cp, StorageServer.class.getName(), "--node-id=" + node, "--data-dir=" + dir.resolve(node),
                "--port=0", "--zk=" + zkServer.getConnectString(), "--segment-size=8M", "--ack-timeout-ms=8000",
                "--tail-layout=" + layout.flag());
        pb.redirectError(ProcessBuilder.Redirect.appendTo(dir.resolve(node + ".log").toFile()));
        Process p = pb.start();
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        String line;
        while ((line = out.readLine()) != null) {
            if (line.startsWith("READY storage " + node + " ")) {
                break;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError(node + " did not print READY");
            }
        }
        if (line == null) {
            throw new AssertionError(node + " exited before READY: " + Files.readString(dir.resolve(node + ".log")));
        }
        Thread drain = new Thread(() -> {
            try {
                while (out.readLine() != null) {
                    // keep the pipe empty
                }
            } catch (Exception ignored) {
                // process gone
            }
        }, "drain-" + node);
        drain.setDaemon(true);
        drain.start();
        processes.put(node, p);
        return p;
    }

    private void publish(GroupRecord g) throws Exception {
        zk.setData().forPath(ZkPaths.group(GROUP), MetaJson.write(g));
        current = g;
    }

    private GroupRecord readGroup() throws Exception {
        return MetaJson.read(zk.getData().forPath(ZkPaths.group(GROUP)), GroupRecord.class);
    }

    /** What a gateway keeps per block: the content of the last acknowledged write. */
    private static final class Acked {
        final Map<Long, byte[]> blocks = new ConcurrentHashMap<>();
        final AtomicLong writes = new AtomicLong();
        final AtomicLong retries = new AtomicLong();
    }

    /** A gateway-like client: connections by address, chain and addresses re-read from ZooKeeper after any failure. */
    private final class Gateway {
        final EventLoopGroup loop;
        final Map<String, StorageClient> clients = new ConcurrentHashMap<>();

        Gateway(EventLoopGroup loop) {
            this.loop = loop;
        }

        StorageClient client(String node) throws Exception {
            NodeRecord r = MetaJson.read(zk.getData().forPath(ZkPaths.node(node)), NodeRecord.class);
            String addr = r.host() + ":" + r.port();
            StorageClient c = clients.get(addr);
            if (c == null || !c.isOpen()) {
                c = StorageClient.connect(loop, r.host(), r.port());
                clients.put(addr, c);
            }
            return c;
        }

        /** Writes until acknowledged (or the deadline passes); returns false only at the deadline. */
        boolean write(ChunkId chunk, long offset, byte[] data, long deadlineNanos, Acked acked) throws Exception {
            GroupRecord view = current;
            while (System.nanoTime() < deadlineNanos) {
                GroupRecord g = view;
                try {
                    StorageResponse r = client(g.head()).send(id -> new WriteRequest(id, 0,
                            new ChainAddress(GROUP, g.chainVersion(), 1), chunk, offset, 0, Unpooled.wrappedBuffer(data)))
                            .get(20, TimeUnit.SECONDS);
                    r.data().release();
                    if (r.status() == Status.OK) {
                        return true;
                    }
                } catch (Exception e) {
                    // connection refused or lost: the node may be dead; re-read the chain below
                }
                acked.retries.incrementAndGet();
                Thread.sleep(20 + new Random().nextInt(50));
                view = readGroup();
            }
            return false;
        }

        byte[] read(String node, long version, ChunkId chunk, long offset) throws Exception {
            StorageResponse r = client(node).send(id -> new ReadRequest(id, new ChainAddress(GROUP, version, 1), chunk, offset, BLOCK))
                    .get(20, TimeUnit.SECONDS);
            try {
                assertEquals(Status.OK, r.status(), node + ": " + r.message());
                byte[] out = new byte[BLOCK];
                r.data().getBytes(r.data().readerIndex(), out);
                return out;
            } finally {
                r.data().release();
            }
        }
    }

    private static ChunkId chunkOf(int writer) {
        return new ChunkId(7, writer % 2);
    }

    private static long offsetOf(int writer, int block) {
        return ((long) (writer / 2) * BLOCKS_PER_WRITER + block) * BLOCK;
    }

    @ParameterizedTest
    @EnumSource(TailLayout.class)
    void everyAcknowledgedWriteSurvivesKillsOfHeadMiddleAndTail(TailLayout tailLayout) throws Exception {
        layout = tailLayout;
        // The default layout gets the full minute of kills; `log` shares all of the chain code and gets
        // half of it, to keep the test command inside CI's budget. -Dchaincrash.seconds sets both.
        long seconds = Long.getLong("chaincrash.seconds", tailLayout == StorageServerConfig.DEFAULT_TAIL_LAYOUT ? 60 : 30);
        classPath = snapshotClassPath();
        zkServer = new TestingServer(true);
        zk = CuratorFrameworkFactory.newClient(zkServer.getConnectString(), new RetryOneTime(100));
        zk.start();
        EventLoopGroup loop = NettyTransport.group(2, "crash-gateway");
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> writers = new ArrayList<>();
        List<Acked> acked = new ArrayList<>();
        List<Throwable> writerErrors = new ArrayList<>();
        try {
            zk.create().creatingParentsIfNeeded().forPath(ZkPaths.group(GROUP), MetaJson.write(new GroupRecord(GROUP, 1, NODES)));
            current = new GroupRecord(GROUP, 1, NODES);
            for (String n : NODES) {
                launch(n);
            }
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            for (int w = 0; w < WRITERS; w++) {
                int writer = w;
                Acked mine = new Acked();
                acked.add(mine);
                Thread t = new Thread(() -> {
                    Gateway gw = new Gateway(loop);
                    Random r = new Random(writer);
                    long counter = 0;
                    try {
                        while (!stop.get()) {
                            int block = r.nextInt(BLOCKS_PER_WRITER);
                            byte[] data = new byte[BLOCK];
                            r.nextBytes(data);
                            ByteBuffer.wrap(data).putInt(writer).putInt(block).putLong(++counter);
                            // After stop, a write already started still runs to its acknowledgement.
                            if (gw.write(chunkOf(writer), offsetOf(writer, block), data,
                                    System.nanoTime() + TimeUnit.SECONDS.toNanos(120), mine)) {
                                mine.blocks.put((long) block, data);
                                mine.writes.incrementAndGet();
                            } else {
                                throw new AssertionError("writer " + writer + ": a write was not acknowledged within 120 s");
                            }
                        }
                    } catch (Throwable e) {
                        synchronized (writerErrors) {
                            writerErrors.add(e);
                        }
                    }
                }, "writer-" + w);
                writers.add(t);
                t.start();
            }

            String[] positions = {"head", "middle", "tail"};
            int kills = 0;
            List<String> history = new ArrayList<>();
            long started = System.nanoTime();
            long lastKillAt = 0;
            while (System.nanoTime() < end) {
                Thread.sleep(2_000);
                while (acked.stream().mapToLong(a -> a.writes.get()).sum() < lastKillAt + WRITES_BETWEEN_KILLS
                        && writerErrors.isEmpty() && System.nanoTime() < end + TimeUnit.SECONDS.toNanos(60)) {
                    Thread.sleep(20);
                }
                GroupRecord g = current;
                int pos = kills % 3 == 0 ? 0 : kills % 3 == 1 ? 1 : g.members().size() - 1;
                String victim = g.members().get(pos);
                long before = acked.stream().mapToLong(a -> a.writes.get()).sum();
                lastKillAt = before;
                Process p = processes.get(victim);
                p.destroyForcibly(); // SIGKILL
                assertTrue(p.waitFor(10, TimeUnit.SECONDS));
                kills++;
                List<String> rest = new ArrayList<>(g.members());
                rest.remove(victim);
                publish(new GroupRecord(GROUP, g.chainVersion() + 1, rest));
                launch(victim);
                GroupRecord joining = new GroupRecord(GROUP, current.chainVersion() + 1, rest, victim);
                publish(joining);
                long joinStart = System.nanoTime();
                String caughtUp = ZkPaths.caughtUp(GROUP, victim);
                while (zk.checkExists().forPath(caughtUp) == null) {
                    if (System.nanoTime() - joinStart > TimeUnit.SECONDS.toNanos(60)) {
                        throw new AssertionError(victim + " did not catch up within 60 s; see " + dir.resolve(victim + ".log"));
                    }
                    Thread.sleep(20);
                }
                zk.delete().forPath(caughtUp);
                List<String> whole = new ArrayList<>(rest);
                whole.add(victim);
                publish(new GroupRecord(GROUP, current.chainVersion() + 1, whole));
                history.add(String.format("kill %d: %s (%s) at %.1f s, %d writes acknowledged before, caught up in %d ms, chain now %s v%d",
                        kills, victim, positions[(kills - 1) % 3], (System.nanoTime() - started) / 1e9, before,
                        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - joinStart), whole, current.chainVersion()));
            }
            stop.set(true);
            for (Thread t : writers) {
                t.join(180_000);
            }
            assertTrue(writerErrors.isEmpty(), "writer failures: " + writerErrors);
            history.forEach(System.out::println);

            // Verify: every block's last acknowledged content, from every replica.
            GroupRecord g = readGroup();
            Gateway gw = new Gateway(loop);
            long verified = 0;
            long mismatches = 0;
            List<String> firstMismatches = new ArrayList<>();
            for (String node : g.members()) {
                for (int w = 0; w < WRITERS; w++) {
                    for (Map.Entry<Long, byte[]> e : acked.get(w).blocks.entrySet()) {
                        byte[] got = gw.read(node, g.chainVersion(), chunkOf(w), offsetOf(w, e.getKey().intValue()));
                        if (Arrays.equals(e.getValue(), got)) {
                            verified++;
                        } else {
                            mismatches++;
                            if (firstMismatches.size() < 10) {
                                ByteBuffer b = ByteBuffer.wrap(got);
                                ByteBuffer x = ByteBuffer.wrap(e.getValue());
                                firstMismatches.add(node + " writer " + w + " block " + e.getKey() + ": expected write #"
                                        + x.getLong(8) + ", found writer " + b.getInt(0) + " block " + b.getInt(4) + " write #" + b.getLong(8));
                            }
                        }
                    }
                }
            }
            long writes = acked.stream().mapToLong(a -> a.writes.get()).sum();
            long retries = acked.stream().mapToLong(a -> a.retries.get()).sum();
            System.out.printf("chain crash test (" + layout.flag() + "): %.1f s, %d kills, %d acknowledged writes (%d retries), %d block reads verified"
                    + " on %d replicas, %d mismatches%n", (System.nanoTime() - started) / 1e9, kills, writes, retries, verified,
                    g.members().size(), mismatches);
            long copied = 0;
            int catchUps = 0;
            java.util.regex.Pattern line = java.util.regex.Pattern.compile("caught up from \\S+ \\((\\d+) bytes copied");
            for (String n : NODES) {
                java.util.regex.Matcher m = line.matcher(Files.readString(dir.resolve(n + ".log")));
                while (m.find()) {
                    copied += Long.parseLong(m.group(1));
                    catchUps++;
                }
            }
            System.out.printf("catch-up: %d completed, %d bytes copied in all%n", catchUps, copied);
            assertEquals(kills, catchUps, "every killed node caught up once");
            assertEquals(0, mismatches, "acknowledged writes lost or stale: " + firstMismatches);
            assertEquals(3, g.members().size());
            assertTrue(kills >= 3, "head, middle and tail were each killed at least once: " + kills);
            assertTrue(writes >= (long) kills * WRITES_BETWEEN_KILLS, "only " + writes + " writes acknowledged");
        } finally {
            stop.set(true);
            for (Process p : processes.values()) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
            zk.close();
            zkServer.close();
        }
    }
}
