package io.fastblock.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.Status;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.WriteRequest;
import io.fastblock.protocol.client.BlockingStorageClient;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.ZkPaths;
import io.fastblock.storage.net.NettyTransport;
import io.fastblock.storage.net.StorageClient;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoopGroup;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 of a tail whose log runs on reused segment files: small segments, and four writers each
 * overwriting its blocks in turn, so that every segment is dead one round later and the cleaner
 * retires it without moving anything; its file (holding whole records bound to its old number)
 * becomes a new segment. All records are 4 KiB writes of one size, so the old records lie exactly
 * where the new ones would continue: the case replay must not be fooled by. The kill comes while
 * the active segment is on a reused file (seen so for a third segment). After a restart every block
 * reads back as its last acknowledged version, or as the version in flight at the kill: never an
 * older one, which is what a reused file's earlier records would bring back if replay took them.
 */
class SegmentReuseCrashIT {
    private static final int BLOCK = 4096;
    private static final int BLOCKS_PER_WRITER = 128;
    private static final int WRITERS = 4;
    private static final ChainAddress CHAIN = new ChainAddress(1, 1, 1);

    @TempDir
    Path dir;

    private Process launch(String zk, boolean directIo) throws Exception {
        return StorageServerProcess.launch(dir, "reuse", zk, "--segment-size=256K", "--log-clean-target=0.05",
                "--log-direct-io=" + directIo);
    }


    private static byte[] block(int writer, int block, int version) {
        byte[] b = new byte[BLOCK];
        new Random(((long) writer << 40) ^ ((long) block << 20) ^ version).nextBytes(b);
        return b;
    }

    /** Per writer: each block's last acknowledged version (0: never written) and the write in flight. */
    private static final class Model {
        final int[] acked = new int[BLOCKS_PER_WRITER];
        volatile int inFlightBlock = -1;
        volatile int inFlightVersion;
        volatile int writes;
    }

    private Object inode(Path p) throws IOException {
        return Files.readAttributes(p, BasicFileAttributes.class).fileKey();
    }

    /** Adds the file keys of kept {@code .free} files to {@code kept}; returns the segments whose file is one of them. */
    private List<String> segmentsOnKeptFiles(Path logDir, Set<Object> kept) throws IOException {
        List<String> reused = new ArrayList<>();
        try (Stream<Path> files = Files.list(logDir)) {
            for (Path p : (Iterable<Path>) files::iterator) {
                String name = p.getFileName().toString();
                try {
                    if (name.endsWith(".free")) {
                        kept.add(inode(p));
                    } else if (name.endsWith(".seg") && kept.contains(inode(p))) {
                        reused.add(name);
                    }
                } catch (java.nio.file.NoSuchFileException renamedMeanwhile) {
                    // the next look sees it under its new name
                }
            }
        }
        return reused;
    }

    private static String highestSegment(Path logDir) throws IOException {
        try (Stream<Path> files = Files.list(logDir)) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".seg")).max(String::compareTo).orElse("");
        }
    }

    /**
     * Around the page cache a batch pads its last block with zeros, which end replay before the old
     * records do; through the cache the record after the last new one is an old one, whole, and
     * only its binding to another segment keeps replay from taking it.
     */
    @ParameterizedTest(name = "direct writes: {0}")
    @ValueSource(booleans = {true, false})
    void acknowledgedOverwritesSurviveKillMinus9OnReusedSegmentFiles(boolean directIo) throws Exception {
        try (TestingServer zkServer = new TestingServer(true);
             CuratorFramework zk = CuratorFrameworkFactory.newClient(zkServer.getConnectString(), new RetryOneTime(100))) {
            zk.start();
            zk.create().creatingParentsIfNeeded().forPath(ZkPaths.group(1), MetaJson.write(new GroupRecord(1, 1, List.of("reuse"))));
            EventLoopGroup loop = NettyTransport.group(2, "reuse-client");
            Process server = launch(zkServer.getConnectString(), directIo);
            try {
                int firstPort = StorageServerProcess.awaitReady(server, "reuse");
                List<Model> models = new ArrayList<>();
                AtomicBoolean killed = new AtomicBoolean();
                List<Thread> writers = new ArrayList<>();
                for (int w = 0; w < WRITERS; w++) {
                    int writer = w;
                    Model model = new Model();
                    models.add(model);
                    Thread t = new Thread(() -> {
                        try (StorageClient c = StorageClient.connect(loop, "127.0.0.1", firstPort).awaitConnected(10, TimeUnit.SECONDS)) {
                            for (int n = writer * 17; !killed.get(); n++) {
                                int b = n % BLOCKS_PER_WRITER;
                                int v = model.acked[b] + 1;
                                model.inFlightVersion = v;
                                model.inFlightBlock = b;
                                byte[] data = block(writer, b, v);
                                StorageResponse resp = c.send(id -> new WriteRequest(id, 0, CHAIN, new ChunkId(1, writer),
                                        (long) b * BLOCK, 0, Unpooled.wrappedBuffer(data))).get(20, TimeUnit.SECONDS);
                                if (resp.status() != Status.OK) {
                                    break;
                                }
                                model.acked[b] = v;
                                model.inFlightBlock = -1;
                                model.writes++;
                            }
                        } catch (Exception e) {
                            if (!killed.get()) {
                                throw new AssertionError("writer " + writer + " failed before the kill", e);
                            }
                        }
                    }, "reuse-writer-" + w);
                    writers.add(t);
                    t.start();
                }
                // Kill while the active segment (the highest-numbered) is on a reused file, the third time a new one is.
                Path logDir = dir.resolve("data").resolve("log");
                Set<Object> kept = new HashSet<>();
                Set<String> activeOnReused = new HashSet<>();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
                while (activeOnReused.size() < 3 && System.nanoTime() < deadline) {
                    Thread.sleep(5);
                    if (Files.isDirectory(logDir)) {
                        List<String> now = segmentsOnKeptFiles(logDir, kept);
                        String highest = highestSegment(logDir);
                        if (now.contains(highest)) {
                            activeOnReused.add(highest);
                        }
                    }
                }
                killed.set(true);
                server.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                for (Thread t : writers) {
                    t.join(30_000);
                }
                assertTrue(activeOnReused.size() >= 3, "the active segment was on a reused file only in " + activeOnReused);
                int total = models.stream().mapToInt(m -> m.writes).sum();
                List<String> segments;
                try (Stream<Path> files = Files.list(logDir)) {
                    segments = files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".seg")).sorted().toList();
                }
                List<String> onReused = segmentsOnKeptFiles(logDir, kept);
                String active = segments.get(segments.size() - 1);

                server = launch(zkServer.getConnectString(), directIo);
                int port = StorageServerProcess.awaitReady(server, "reuse");
                int inFlightLanded = 0;
                try (BlockingStorageClient c = new BlockingStorageClient("127.0.0.1", port, java.time.Duration.ofSeconds(30))) {
                    for (int w = 0; w < WRITERS; w++) {
                        Model model = models.get(w);
                        byte[] all = c.read(CHAIN, new ChunkId(1, w), 0, BLOCKS_PER_WRITER * BLOCK);
                        for (int b = 0; b < BLOCKS_PER_WRITER; b++) {
                            byte[] got = java.util.Arrays.copyOfRange(all, b * BLOCK, (b + 1) * BLOCK);
                            int v = model.acked[b];
                            byte[] want = v == 0 ? new byte[BLOCK] : block(w, b, v);
                            if (b == model.inFlightBlock && java.util.Arrays.equals(block(w, b, model.inFlightVersion), got)) {
                                inFlightLanded++;
                                continue;
                            }
                            assertArrayEquals(want, got, "writer " + w + " block " + b + ": want version " + v
                                    + (b == model.inFlightBlock ? " or the in-flight " + model.inFlightVersion : ""));
                        }
                    }
                }
                System.out.println((directIo ? "direct writes" : "through the page cache") + ": kill -9 after " + total + " acknowledged overwrites; segments at the kill " + segments
                        + ", on reused files " + onReused + " (active " + active + (onReused.contains(active) ? ", reused" : "")
                        + "); every block read back as its last acknowledged version (" + inFlightLanded
                        + " in-flight writes had landed)");
                server.destroy();
                assertTrue(server.waitFor(30, TimeUnit.SECONDS), "server did not stop on SIGTERM");
            } finally {
                server.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
            }
        }
    }
}
