package io.fastblock.storage.integrity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.ChunkListRequest;
import io.fastblock.protocol.Extents;
import io.fastblock.protocol.ExtentsRequest;
import io.fastblock.protocol.ReadRequest;
import io.fastblock.protocol.Status;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.WriteRequest;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.ZkPaths;
import io.fastblock.storage.BackgroundRates;
import io.fastblock.storage.chain.TailLayout;
import io.fastblock.storage.io.FaultInjectingFileIo;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A fourth server joins a chain a -> b -> c behind its tail while writers keep writing and
 * trimming at the head, then replaces c; every replica is compared byte for byte and block
 * allocation for block allocation with each other and with what the writers had acknowledged.
 * Real servers on real sockets, real ZooKeeper, real files. The join copies slowly (a small
 * --copy-rate) so the copy races the writes for seconds.
 */
class JoinUnderWritesTest {
    private static final int CHUNK_BYTES = 1 << 20;
    private static final int BLOCK = 4096;
    private static final int WRITERS = 4;
    /** Chunks the writers keep changing (one each) and chunks written only before the join. */
    private static final int CHUNKS = 6;
    private static final long VOLUME = 70;

    @TempDir
    Path dir;

    private static ChainAddress chain(long version) {
        return new ChainAddress(ThreeNodeChain.GROUP, version, 1);
    }

    private static ChunkId chunk(int i) {
        return new ChunkId(VOLUME, i);
    }

    private static void setGroup(ThreeNodeChain c, long version, List<String> members, String joining) throws Exception {
        c.zk.setData().forPath(ZkPaths.group(ThreeNodeChain.GROUP),
                MetaJson.write(new GroupRecord(ThreeNodeChain.GROUP, version, members, joining)));
    }

    private static StorageResponse chunkList(ThreeNodeChain c, String node, String joiner) throws Exception {
        StorageResponse r = c.client(node).send(id -> new ChunkListRequest(id, chain(1), joiner)).get(30, TimeUnit.SECONDS);
        r.data().release();
        return r;
    }

    /**
     * A joining node names itself in CHUNK_LIST; a tail that does not (even after re-reading the
     * group) know that node as joining refuses, since it would not forward the writes it orders
     * meanwhile to it. A listing without a joiner (resync) is answered as before.
     */
    @Test
    void aTailListsChunksForACatchUpOnlyOnceItKnowsTheJoiner() throws Exception {
        try (ThreeNodeChain c = new ThreeNodeChain(dir, 3)) {
            assertEquals(Status.OK, c.write(chunk(0), 0, new byte[BLOCK]).status());
            StorageResponse unknown = chunkList(c, "c", "d");
            assertEquals(Status.STALE_CHAIN, unknown.status(), unknown.message());
            assertTrue(unknown.message().contains("does not know d as joining"), unknown.message());
            assertEquals(Status.OK, chunkList(c, "c", null).status(), "a resync's listing names no joiner");

            // The namenode names d (same chain version): the tail re-reads the group before answering.
            setGroup(c, 1, ThreeNodeChain.IDS, "d");
            StorageResponse known = chunkList(c, "c", "d");
            assertEquals(Status.OK, known.status(), known.message());
            StorageResponse other = chunkList(c, "c", "e");
            assertEquals(Status.STALE_CHAIN, other.status(), other.message());
            assertTrue(other.message().contains("(joining: d)"), other.message());
            StorageResponse notTail = chunkList(c, "b", "d");
            assertEquals(Status.NOT_MEMBER, notTail.status(), notTail.message());
        }
    }

    @Test
    void aJoinerCatchingUpUnderWritesEndsIdenticalToTheOthers() throws Exception {
        joinUnderWrites(false);
    }

    /**
     * The group record is written again (same content) while d copies: the record d went by may
     * hide that d was dropped and named again meanwhile, so d must not announce that attempt. It
     * starts over (counted) and then converges. Before the announcement was tied to the record's
     * znode version, d announced after its first attempt (no restart).
     */
    @Test
    void aCatchUpWhoseGroupRecordWasRewrittenStartsOverAndConverges() throws Exception {
        joinUnderWrites(true);
    }

    private void joinUnderWrites(boolean rewriteDuringCopy) throws Exception {
        BackgroundRates slowCopies = new BackgroundRates(2L << 20, 0, 600_000);
        try (ThreeNodeChain c = new ThreeNodeChain(dir, 5, slowCopies)) {
            Random random = new Random(17);
            byte[][] model = new byte[CHUNKS][CHUNK_BYTES];
            boolean[][] allocated = new boolean[CHUNKS][CHUNK_BYTES / BLOCK];
            for (int i = 0; i < CHUNKS; i++) {
                random.nextBytes(model[i]);
                assertEquals(Status.OK, c.write(chunk(i), 0, model[i]).status());
                Arrays.fill(allocated[i], true);
            }

            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong acknowledged = new AtomicLong();
            ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
            List<Thread> writers = new ArrayList<>();
            for (int w = 0; w < WRITERS; w++) {
                int mine = w;
                Thread t = new Thread(() -> {
                    Random r = new Random(100 + mine);
                    try {
                        while (!stop.get()) {
                            int firstBlock = r.nextInt(CHUNK_BYTES / BLOCK - 16);
                            int blocks = 1 + r.nextInt(16);
                            long offset = (long) firstBlock * BLOCK;
                            StorageResponse resp;
                            if (r.nextInt(8) == 0) {
                                resp = c.client("a").send(id -> WriteRequest.trim(id, chain(1), chunk(mine), offset, blocks * BLOCK))
                                        .get(60, TimeUnit.SECONDS);
                                if (resp.isOk()) {
                                    Arrays.fill(model[mine], (int) offset, (int) offset + blocks * BLOCK, (byte) 0);
                                    Arrays.fill(allocated[mine], firstBlock, firstBlock + blocks, false);
                                }
                            } else {
                                byte[] data = new byte[blocks * BLOCK];
                                r.nextBytes(data);
                                resp = c.client("a").send(id -> new WriteRequest(id, 0, chain(1), chunk(mine), offset, 0,
                                        Unpooled.wrappedBuffer(data))).get(60, TimeUnit.SECONDS);
                                if (resp.isOk()) {
                                    System.arraycopy(data, 0, model[mine], (int) offset, data.length);
                                    Arrays.fill(allocated[mine], firstBlock, firstBlock + blocks, true);
                                }
                            }
                            resp.data().release();
                            if (!resp.isOk()) {
                                failures.add("writer " + mine + ": " + resp.status() + " " + resp.message());
                                return; // the model no longer knows what the replicas should hold
                            }
                            acknowledged.incrementAndGet();
                        }
                    } catch (Exception e) {
                        failures.add("writer " + mine + ": " + e);
                    }
                }, "join-writer-" + w);
                t.start();
                writers.add(t);
            }

            c.disks.put("d", new FaultInjectingFileIo.Factory(99));
            c.start("d");
            Thread.sleep(300);
            long beforeJoin = acknowledged.get();
            setGroup(c, 1, ThreeNodeChain.IDS, "d");
            String caughtUp = ZkPaths.caughtUp(ThreeNodeChain.GROUP, "d");
            if (rewriteDuringCopy) {
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (c.server("d").chainMetrics().catchUpBytes.count() == 0) {
                    assertTrue(System.nanoTime() < until, "d did not start copying within 60 s");
                    Thread.sleep(10);
                }
                assertTrue(c.zk.checkExists().forPath(caughtUp) == null, "the copy ended before the rewrite: raise CHUNKS");
                setGroup(c, 1, ThreeNodeChain.IDS, "d");
            }
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (c.zk.checkExists().forPath(caughtUp) == null) {
                assertTrue(System.nanoTime() < until, "d did not catch up within 120 s: " + failures);
                assertTrue(failures.isEmpty(), failures.toString());
                Thread.sleep(50);
            }
            long duringJoin = acknowledged.get() - beforeJoin;
            Thread.sleep(300); // forwarded writes to the caught-up joiner, still behind c
            stop.set(true);
            for (Thread t : writers) {
                t.join(TimeUnit.SECONDS.toMillis(90));
            }
            assertTrue(failures.isEmpty(), failures.toString());
            double restarts = c.server("d").chainMetrics().catchUpRestarts.count();
            System.out.printf("join under writes%s: %d writes acknowledged while d caught up, %.0f bytes copied, %.0f restart(s)%n",
                    rewriteDuringCopy ? " (record rewritten during the copy)" : "", duringJoin,
                    c.server("d").chainMetrics().catchUpBytes.count(), restarts);
            assertTrue(duringJoin > 0, "no write raced the join: nothing was tested");
            assertEquals(rewriteDuringCopy ? 1.0 : 0.0, restarts, "catch-up restarts");

            // d replaces c as tail (c stays readable on its files).
            double foldsBefore = c.server("c").logStore().logMetrics().folds.count();
            setGroup(c, 2, List.of("a", "b", "d"), null);
            if (c.layout == TailLayout.LOG) {
                // c's copy is in its log until it folds each chunk into its file on leaving the tail.
                long foldedBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (c.server("c").logStore().logMetrics().folds.count() < foldsBefore + CHUNKS) {
                    assertTrue(System.nanoTime() < foldedBy, "c did not fold its log within 30 s");
                    Thread.sleep(20);
                }
            }
            for (int i = 0; i < CHUNKS; i++) {
                byte[] expected = model[i];
                Extents expectedExtents = extentsOf(allocated[i]);
                for (String node : List.of("a", "b", "d")) {
                    assertArrayEquals(expected, read(c, node, chunk(i)), node + " chunk " + i);
                    assertEquals(expectedExtents, extents(c, node, chunk(i)), node + " allocation of chunk " + i);
                }
                assertArrayEquals(expected, local(c, "c", chunk(i)), "c chunk " + i);
            }
        }
    }

    private static Extents extentsOf(boolean[] allocated) {
        List<Extents.Range> ranges = new ArrayList<>();
        int i = 0;
        while (i < allocated.length) {
            if (!allocated[i]) {
                i++;
                continue;
            }
            int start = i;
            while (i < allocated.length && allocated[i]) {
                i++;
            }
            ranges.add(new Extents.Range((long) start * BLOCK, (i - start) * BLOCK));
        }
        return Extents.of(ranges);
    }

    private static byte[] read(ThreeNodeChain c, String node, ChunkId chunk) throws Exception {
        StorageResponse r = c.client(node).send(id -> new ReadRequest(id, chain(2), chunk, 0, CHUNK_BYTES)).get(30, TimeUnit.SECONDS);
        try {
            assertEquals(Status.OK, r.status(), node + ": " + r.message());
            byte[] out = new byte[r.data().readableBytes()];
            r.data().getBytes(r.data().readerIndex(), out);
            return out;
        } finally {
            r.data().release();
        }
    }

    private static Extents extents(ThreeNodeChain c, String node, ChunkId chunk) throws Exception {
        StorageResponse r = c.client(node).send(id -> new ExtentsRequest(id, chain(2), chunk, 0, CHUNK_BYTES))
                .get(30, TimeUnit.SECONDS);
        try {
            assertEquals(Status.OK, r.status(), node + ": " + r.message());
            return Extents.decode(r.data());
        } finally {
            r.data().release();
        }
    }

    private static byte[] local(ThreeNodeChain c, String node, ChunkId chunk) throws Exception {
        ByteBuf b = c.server(node).chunkStore().readAsync(chunk, 0, CHUNK_BYTES, ByteBufAllocator.DEFAULT).get(30, TimeUnit.SECONDS);
        try {
            byte[] out = new byte[CHUNK_BYTES];
            b.getBytes(b.readerIndex(), out, 0, Math.min(CHUNK_BYTES, b.readableBytes()));
            return out;
        } finally {
            b.release();
        }
    }
}
