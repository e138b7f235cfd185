package io.fastblock.storage.integrity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.ReadRequest;
import io.fastblock.protocol.Status;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.WriteRequest;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.ZkPaths;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A head applies a write locally that never reaches the tail (its successor is gone and then the
 * head itself is dropped from the chain), the chain goes on without it, and it comes back. Its
 * copy of that chunk must end up as the tail's: the tail's changes since the head's recorded
 * sequence do not name the range the head wrote alone, so the chunk has to be copied whole. Real
 * servers, real ZooKeeper; every replica is compared byte for byte.
 */
class WriteAheadOfTailCatchUpTest {
    private static final int CHUNK_BYTES = 1 << 20;
    private static final int BLOCK = 4096;
    private static final ChunkId AHEAD = new ChunkId(50, 0);
    private static final ChunkId UNTOUCHED = new ChunkId(50, 1);
    /**
     * A chunk only the returning head ever had: its one write never reached the tail. The write starts
     * a sector into the chunk, so the chunk's length is not whole blocks and giving it back must zero a
     * partial block as well as trim whole ones.
     */
    private static final ChunkId ONLY_HERE = new ChunkId(50, 2);
    private static final long ONLY_HERE_AT = 512;

    @TempDir
    Path dir;

    private final Random random = new Random(7);

    private static ChainAddress chain(long version) {
        return new ChainAddress(ThreeNodeChain.GROUP, version, 1);
    }

    private byte[] bytes(int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    private static CompletableFuture<StorageResponse> send(ThreeNodeChain c, String head, long version, ChunkId chunk,
                                                           long offset, byte[] data) throws Exception {
        return c.client(head).send(id -> new WriteRequest(id, 0, chain(version), chunk, offset, 0, Unpooled.wrappedBuffer(data)));
    }

    private static void write(ThreeNodeChain c, String head, long version, ChunkId chunk, long offset, byte[] data)
            throws Exception {
        StorageResponse r = send(c, head, version, chunk, offset, data).get(30, TimeUnit.SECONDS);
        assertEquals(Status.OK, r.status(), r.message());
    }

    private static void setGroup(ThreeNodeChain c, long version, List<String> members, String joining) throws Exception {
        c.zk.setData().forPath(ZkPaths.group(ThreeNodeChain.GROUP),
                MetaJson.write(new GroupRecord(ThreeNodeChain.GROUP, version, members, joining)));
    }

    private static byte[] localCopy(ThreeNodeChain c, String node, ChunkId chunk, long offset, int length) throws Exception {
        ByteBuf b = c.server(node).chunkStore().readAsync(chunk, offset, length, ByteBufAllocator.DEFAULT).get(30, TimeUnit.SECONDS);
        try {
            byte[] out = new byte[b.readableBytes()];
            b.getBytes(b.readerIndex(), out);
            return out;
        } finally {
            b.release();
        }
    }

    private static byte[] replica(ThreeNodeChain c, String node, long version, ChunkId chunk) throws Exception {
        StorageResponse r = c.client(node).send(id -> new ReadRequest(id, chain(version), chunk, 0, CHUNK_BYTES))
                .get(30, TimeUnit.SECONDS);
        try {
            assertEquals(Status.OK, r.status(), node + ": " + r.message());
            byte[] out = new byte[r.data().readableBytes()];
            r.data().getBytes(r.data().readerIndex(), out);
            return out;
        } finally {
            r.data().release();
        }
    }

    @Test
    void aWriteTheTailNeverGotIsReplacedWhenItsHeadReturns() throws Exception {
        try (ThreeNodeChain c = new ThreeNodeChain(dir, 11)) {
            write(c, "a", 1, AHEAD, 0, bytes(CHUNK_BYTES));
            write(c, "a", 1, UNTOUCHED, 0, bytes(CHUNK_BYTES));

            // b dies: a applies the next write locally but cannot forward it.
            c.servers.remove("b").close();
            long offset = 64L * BLOCK;
            byte[] alone = bytes(4 * BLOCK);
            CompletableFuture<StorageResponse> lost = send(c, "a", 1, AHEAD, offset, alone);
            CompletableFuture<StorageResponse> lostNew = send(c, "a", 1, ONLY_HERE, ONLY_HERE_AT, alone);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!Arrays.equals(alone, localCopy(c, "a", AHEAD, offset, alone.length))
                    || !Arrays.equals(alone, localCopy(c, "a", ONLY_HERE, ONLY_HERE_AT, alone.length))) {
                assertTrue(System.nanoTime() < deadline, "a never applied the writes locally");
                Thread.sleep(20);
            }
            // The namenode gives up on a too (say its session expired): c alone carries the group.
            setGroup(c, 2, List.of("c"), null);
            for (CompletableFuture<StorageResponse> w : List.of(lost, lostNew)) {
                StorageResponse failed = w.get(30, TimeUnit.SECONDS);
                assertNotEquals(Status.OK, failed.status(), "the write never reached the tail and must not be acknowledged");
            }
            write(c, "c", 2, AHEAD, 200L * BLOCK, bytes(2 * BLOCK));
            write(c, "c", 2, UNTOUCHED, 8L * BLOCK, bytes(BLOCK));

            // a stops and comes back, then rejoins behind c.
            c.servers.remove("a").close();
            c.start("a");
            setGroup(c, 3, List.of("c"), "a");
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (c.zk.checkExists().forPath(ZkPaths.caughtUp(ThreeNodeChain.GROUP, "a")) == null) {
                assertTrue(System.nanoTime() < until, "a did not catch up within 120 s");
                Thread.sleep(50);
            }
            double planned = c.server("a").chainMetrics().catchUpPlannedBytes.count();
            System.out.printf("write ahead of the tail: %.0f bytes planned on return%n", planned);
            setGroup(c, 4, List.of("c", "a"), null);

            for (ChunkId chunk : List.of(AHEAD, UNTOUCHED, ONLY_HERE)) {
                assertArrayEquals(replica(c, "c", 4, chunk), replica(c, "a", 4, chunk), "chunk " + chunk + ": a differs from the tail c");
            }
            assertArrayEquals(new byte[alone.length], localCopy(c, "a", ONLY_HERE, ONLY_HERE_AT, alone.length),
                    "the write only a had is gone from its copy");
            // The untouched chunk still came by delta and the chunk the tail never had was given back, not
            // copied: a whole chunk plus a little, not two or three.
            assertEquals(CHUNK_BYTES + BLOCK, planned, "planned: the diverged chunk whole, the untouched one's 4 KiB"
                    + " change, nothing for the chunk the tail never had");
            // Each chunk taken whole is counted under why: the one whose write missed the tail lost its
            // sequence; the one the tail never had is not listed there.
            var metrics = c.server("a").chainMetrics();
            assertEquals(1.0, metrics.catchUpWholeChunks("no_sequence").count(), "chunks copied whole for want of a sequence");
            assertEquals(1.0, metrics.catchUpWholeChunks("not_at_tail").count(), "chunks the tail does not list");
            assertEquals(2.0, metrics.registry().find("fastblock.chain.catchup.whole.chunks").counters().stream()
                    .mapToDouble(io.micrometer.core.instrument.Counter::count).sum(), "chunks taken whole in all");
        }
    }
}
