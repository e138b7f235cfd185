package io.fastblock.storage.integrity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.ReadRequest;
import io.fastblock.protocol.Status;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.WriteRequest;
import io.fastblock.protocol.meta.CatchUpProgress;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.ZkPaths;
import io.fastblock.storage.chain.ChainMetrics;
import io.netty.buffer.Unpooled;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A member that returns after a short outage copies only what changed while it was away (by
 * sequence, from the tail's log), not its whole share: real servers, real ZooKeeper, the group
 * reconfigured as the namenode would (leave, write more, join, caught up, member again). The data
 * is then checked on every replica, trims included. When the tail's log cannot tell (the tail
 * itself was replaced meanwhile) the returning member copies whole chunks and is right as well.
 */
class DeltaCatchUpTest {
    private static final int CHUNKS = 4;
    private static final int CHUNK_BYTES = 2 << 20;
    private static final int BLOCK = 4096;

    @TempDir
    Path dir;

    private final Map<ChunkId, byte[]> model = new HashMap<>();
    private final Random random = new Random(42);

    private static ChainAddress chain(long version) {
        return new ChainAddress(ThreeNodeChain.GROUP, version, 1);
    }

    private void write(ThreeNodeChain c, String head, long version, ChunkId chunk, long offset, int length) throws Exception {
        byte[] data = new byte[length];
        random.nextBytes(data);
        StorageResponse r = c.client(head).send(id -> new WriteRequest(id, 0, chain(version), chunk, offset, 0,
                Unpooled.wrappedBuffer(data))).get(30, TimeUnit.SECONDS);
        assertEquals(Status.OK, r.status(), r.message());
        System.arraycopy(data, 0, model.computeIfAbsent(chunk, k -> new byte[CHUNK_BYTES]), (int) offset, length);
    }

    private void trim(ThreeNodeChain c, String head, long version, ChunkId chunk, long offset, int length) throws Exception {
        StorageResponse r = c.client(head).send(id -> WriteRequest.trim(id, chain(version), chunk, offset, length))
                .get(30, TimeUnit.SECONDS);
        assertEquals(Status.OK, r.status(), r.message());
        Arrays.fill(model.computeIfAbsent(chunk, k -> new byte[CHUNK_BYTES]), (int) offset, (int) offset + length, (byte) 0);
    }

    private static void setGroup(ThreeNodeChain c, long version, List<String> members, String joining) throws Exception {
        c.zk.setData().forPath(ZkPaths.group(ThreeNodeChain.GROUP),
                MetaJson.write(new GroupRecord(ThreeNodeChain.GROUP, version, members, joining)));
    }

    private static void awaitCaughtUp(ThreeNodeChain c, String node) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (c.zk.checkExists().forPath(ZkPaths.caughtUp(ThreeNodeChain.GROUP, node)) == null) {
            assertTrue(System.nanoTime() < deadline, node + " did not catch up within 120 s");
            Thread.sleep(50);
        }
    }

    private void verifyEveryReplica(ThreeNodeChain c, long version, List<String> members) throws Exception {
        for (String node : members) {
            for (Map.Entry<ChunkId, byte[]> e : model.entrySet()) {
                for (int off = 0; off < CHUNK_BYTES; off += 1 << 20) {
                    int at = off;
                    StorageResponse r = c.client(node).send(id -> new ReadRequest(id, chain(version), e.getKey(), at, 1 << 20))
                            .get(30, TimeUnit.SECONDS);
                    try {
                        assertEquals(Status.OK, r.status(), node + ": " + r.message());
                        byte[] got = new byte[1 << 20];
                        r.data().getBytes(r.data().readerIndex(), got);
                        assertArrayEquals(Arrays.copyOfRange(e.getValue(), at, at + (1 << 20)), got,
                                "chunk " + e.getKey() + " at " + at + " on " + node);
                    } finally {
                        r.data().release();
                    }
                }
            }
        }
    }

    @Test
    void aReturningMiddleCopiesOnlyTheDelta() throws Exception {
        try (ThreeNodeChain c = new ThreeNodeChain(dir, 7)) {
            for (int i = 0; i < CHUNKS; i++) {
                write(c, "a", 1, new ChunkId(40, i), 0, CHUNK_BYTES);
            }
            long full = (long) CHUNKS * CHUNK_BYTES;
            // b leaves (a clean stop), the chain goes on without it.
            c.servers.remove("b").close();
            setGroup(c, 2, List.of("a", "c"), null);
            long delta = 0;
            for (int i = 0; i < 16; i++) {
                ChunkId chunk = new ChunkId(40, i % 2);
                write(c, "a", 2, chunk, (long) random.nextInt(CHUNK_BYTES / BLOCK - 4) * BLOCK, 4 * BLOCK);
                delta += 4 * BLOCK;
            }
            trim(c, "a", 2, new ChunkId(40, 3), 256 * 1024, 64 * 1024);

            c.start("b");
            setGroup(c, 3, List.of("a", "c"), "b");
            awaitCaughtUp(c, "b");
            ChainMetrics m = c.server("b").chainMetrics();
            double copied = m.catchUpBytes.count();
            System.out.printf("delta catch-up: %.0f bytes copied for %d bytes written while away (full share %d)%n",
                    copied, delta, full);
            assertTrue(copied >= delta / 2 && copied <= 2 * delta, "copied " + copied + " for a delta of " + delta);
            assertTrue(copied < full / 10, "copied " + copied + " is not far below a full copy of " + full);
            assertEquals(copied, m.catchUpPlannedBytes.count(), "planned only the delta");
            CatchUpProgress p = MetaJson.read(c.zk.getData().forPath(ZkPaths.catchUpProgress(ThreeNodeChain.GROUP, "b")),
                    CatchUpProgress.class);
            assertEquals((long) copied, p.copiedBytes(), "the progress the namenode reads");
            assertEquals(p.totalBytes(), p.copiedBytes());

            setGroup(c, 4, List.of("a", "b", "c"), null);
            write(c, "a", 4, new ChunkId(40, 2), 8 * BLOCK, BLOCK);
            verifyEveryReplica(c, 4, List.of("a", "b", "c"));
            // The trimmed range is unallocated on the returning member, as on the tail.
            assertTrue(c.server("b").chunkStore().extents(new ChunkId(40, 3), 256 * 1024, 64 * 1024).isEmpty(),
                    "trimmed range given back on b");
        }
    }

    @Test
    void whenTheTailsLogCannotTellTheReturningNodeCopiesWholeChunks() throws Exception {
        try (ThreeNodeChain c = new ThreeNodeChain(dir, 8)) {
            for (int i = 0; i < 2; i++) {
                write(c, "a", 1, new ChunkId(41, i), 0, CHUNK_BYTES);
            }
            // The tail leaves: b is promoted, and its log holds only what came after.
            c.servers.remove("c").close();
            setGroup(c, 2, List.of("a", "b"), null);
            write(c, "a", 2, new ChunkId(41, 0), 12 * BLOCK, 2 * BLOCK);
            trim(c, "a", 2, new ChunkId(41, 1), 256 * 1024, 64 * 1024);
            c.start("c");
            setGroup(c, 3, List.of("a", "b"), "c");
            awaitCaughtUp(c, "c");
            double copied = c.server("c").chainMetrics().catchUpPlannedBytes.count();
            assertEquals(2.0 * CHUNK_BYTES, copied, "whole chunks planned when the tail cannot tell the delta");
            setGroup(c, 4, List.of("a", "b", "c"), null);
            verifyEveryReplica(c, 4, List.of("a", "b", "c"));
            // A range the tail no longer has is given back on the returning node, not written as zeros.
            assertTrue(c.server("c").chunkStore().extents(new ChunkId(41, 1), 256 * 1024, 64 * 1024).isEmpty(),
                    "trimmed range given back on c");
            assertFalse(c.server("c").chunkStore().extents(new ChunkId(41, 1), 0, 256 * 1024).isEmpty(),
                    "the rest of the chunk is allocated on c");
        }
    }
}
