package io.fastblock.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.bench.initiator.IscsiInitiator;
import io.fastblock.bench.initiator.IscsiSession;
import io.fastblock.bench.initiator.IscsiUrl;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The crash-consistent cut (docs/snapshots.md) with 32 writes in flight: 32 writers, each owning
 * its own 4 KiB blocks, write self-describing blocks (block number, sequence number) through one
 * iSCSI session while a snapshot is taken. In a clone of the snapshot, every block holds a version
 * at least as new as the last write acknowledged before the snapshot request was sent, older than
 * any write sent after the answer, and whole (never torn inside a 4 KiB block).
 */
class SnapshotCutIT {
    private static final int BLOCK = 4096;
    private static final int WRITERS = 32;
    private static final long VOLUME = 32L << 20;
    private static final int BLOCKS = (int) (VOLUME / BLOCK);

    @TempDir
    Path dir;

    private record Write(int block, long seq, long sentNanos, long ackedNanos) {
    }

    @Test
    void writesAcknowledgedBeforeAreInAndWritesSentAfterAreOut() throws Exception {
        LocalClusterConfig config = TestClusters.onFreePorts(dir.resolve("var"), "--chunk-size=1M", "--no-demo");
        try (LocalCluster cluster = LocalCluster.start(config, LocalCluster.defaultClasspath(), System.out);
             IscsiInitiator initiator = new IscsiInitiator(1, IscsiInitiator.DEFAULT_NAME)) {
            NamenodeAdmin admin = cluster.admin();
            assertEquals(201, admin.createVolume("cut", "32M", "1M").status());
            assertEquals(201, admin.createOpenExport("cut").status());
            IscsiSession session = initiator.login(IscsiUrl.parse(cluster.iscsiUrl("cut")), 30_000)
                    .get(60, TimeUnit.SECONDS);
            session.readCapacity().get(30, TimeUnit.SECONDS);

            List<Write> done = Collections.synchronizedList(new ArrayList<>());
            AtomicBoolean stop = new AtomicBoolean();
            List<CompletableFuture<Void>> writers = new ArrayList<>();
            for (int w = 0; w < WRITERS; w++) {
                writers.add(writer(session, w, stop, done));
            }
            // Enough acknowledged writes on each side of the cut, however slow the machine is (a fixed
            // sleep gave 14 before the request in one CI run).
            awaitWrites(done, 200);
            long t0 = System.nanoTime();
            NamenodeAdmin.Reply snap = admin.post("/v1/volumes/cut/snapshots", Map.of("name", "s1"));
            long t1 = System.nanoTime();
            assertEquals(201, snap.status(), String.valueOf(snap.body()));
            awaitWrites(done, done.size() + 200);
            stop.set(true);
            CompletableFuture.allOf(writers.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);

            long[] snapshotSeq = readClone(cluster, initiator);
            long[] lastAckedBefore = new long[BLOCKS];
            long[] firstSentAfter = new long[BLOCKS];
            java.util.Arrays.fill(firstSentAfter, Long.MAX_VALUE);
            int inFlight = 0;
            int before = 0;
            int after = 0;
            for (Write w : done) {
                if (w.ackedNanos() < t0) {
                    lastAckedBefore[w.block()] = Math.max(lastAckedBefore[w.block()], w.seq());
                    before++;
                } else if (w.sentNanos() > t1) {
                    firstSentAfter[w.block()] = Math.min(firstSentAfter[w.block()], w.seq());
                    after++;
                } else {
                    inFlight++;
                }
            }
            System.out.printf("cut: %d writes acknowledged before the request, %d in flight across it (%.0f ms), %d sent"
                    + " after the answer%n", before, inFlight, (t1 - t0) / 1e6, after);
            assertTrue(before > 100 && after > 100, "too few writes on each side: " + before + " / " + after);
            for (int b = 0; b < BLOCKS; b++) {
                assertTrue(snapshotSeq[b] >= lastAckedBefore[b], "block " + b + ": snapshot holds seq " + snapshotSeq[b]
                        + ", but seq " + lastAckedBefore[b] + " was acknowledged before the snapshot was asked for");
                assertTrue(snapshotSeq[b] < firstSentAfter[b], "block " + b + ": snapshot holds seq " + snapshotSeq[b]
                        + ", sent after the snapshot answered (first such: " + firstSentAfter[b] + ")");
            }
            session.logout(10_000).get(30, TimeUnit.SECONDS);
        }
    }

    /** Writer {@code w} owns blocks w, w+32, ...: it writes them in turn, one write in flight at a time. */
    private static void awaitWrites(List<Write> done, int count) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (done.size() < count && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
    }

    private static CompletableFuture<Void> writer(IscsiSession session, int w, AtomicBoolean stop, List<Write> done) {
        CompletableFuture<Void> finished = new CompletableFuture<>();
        long[] seq = {0};
        int[] next = {w};
        Runnable[] step = new Runnable[1];
        step[0] = () -> {
            if (stop.get()) {
                finished.complete(null);
                return;
            }
            int block = next[0];
            long s = ++seq[0];
            ByteBuf data = Unpooled.buffer(BLOCK);
            for (int i = 0; i < BLOCK / 16; i++) {
                data.writeLong(block).writeLong(s);
            }
            long sent = System.nanoTime();
            session.write((long) block * (BLOCK / 512), BLOCK / 512, data).whenComplete((n, err) -> {
                data.release();
                if (err != null) {
                    finished.completeExceptionally(err);
                    return;
                }
                done.add(new Write(block, s, sent, System.nanoTime()));
                next[0] = next[0] + WRITERS >= BLOCKS ? w : next[0] + WRITERS;
                step[0].run();
            });
        };
        step[0].run();
        return finished;
    }

    /** The sequence number each block holds in a clone of the snapshot (0: never written), checked whole. */
    private static long[] readClone(LocalCluster cluster, IscsiInitiator initiator) throws Exception {
        NamenodeAdmin admin = cluster.admin();
        assertEquals(201, admin.post("/v1/volumes", Map.of("name", "cut-s1", "source", Map.of("snapshot", "cut/s1")))
                .status());
        assertEquals(201, admin.createOpenExport("cut-s1").status());
        IscsiSession clone = initiator.login(IscsiUrl.parse(cluster.iscsiUrl("cut-s1")), 30_000).get(60, TimeUnit.SECONDS);
        clone.readCapacity().get(30, TimeUnit.SECONDS);
        long[] seqs = new long[BLOCKS];
        int per = 256; // 1 MiB per read
        for (int first = 0; first < BLOCKS; first += per) {
            ByteBuf buf = Unpooled.buffer(per * BLOCK);
            clone.read((long) first * (BLOCK / 512), per * (BLOCK / 512), 512, buf).get(60, TimeUnit.SECONDS);
            for (int i = 0; i < per; i++) {
                int b = first + i;
                int base = i * BLOCK;
                long block = buf.getLong(base);
                long s = buf.getLong(base + 8);
                for (int k = 0; k < BLOCK; k += 16) {
                    assertEquals(block, buf.getLong(base + k), "block " + b + " torn at byte " + k);
                    assertEquals(s, buf.getLong(base + k + 8), "block " + b + " torn at byte " + k);
                }
                assertTrue(s == 0 ? block == 0 : block == b, "block " + b + " holds block " + block + "'s data");
                seqs[b] = s;
            }
            buf.release();
        }
        clone.logout(10_000).get(30, TimeUnit.SECONDS);
        return seqs;
    }
}
