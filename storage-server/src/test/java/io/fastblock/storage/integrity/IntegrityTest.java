package io.fastblock.storage.integrity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.storage.chunk.BlockRange;
import io.fastblock.storage.chunk.ChunkStore;
import io.fastblock.storage.io.FaultInjectingFileIo;
import io.fastblock.storage.io.FileIoFactory;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.io.RandomAccessFile;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Read repair, scrubbing and resync over three real chunk stores, the peers reached in process. */
class IntegrityTest {
    private static final int GROUP = 4;
    private static final GroupRecord CHAIN = new GroupRecord(GROUP, 2, List.of("a", "b", "c"));
    private static final ChainAddress ADDRESS = new ChainAddress(GROUP, 2, 1);
    private static final Duration NEVER = Duration.ofHours(1);

    @TempDir
    Path dir;
    private final StoreBackedReplicas peers = new StoreBackedReplicas();
    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private ChunkStore store(String node, FileIoFactory files) throws Exception {
        ChunkStore s = new ChunkStore(dir.resolve(node), 2, files, NEVER);
        open.add(s);
        peers.stores.put(node, s);
        return s;
    }

    private void writeAll(long seq, ChunkId c, long off, byte[] d) throws Exception {
        for (ChunkStore s : peers.stores.values()) {
            s.writeAsync(GROUP, seq, c, off, Unpooled.wrappedBuffer(d)).get(10, TimeUnit.SECONDS);
        }
    }

    private static byte[] bytes(ByteBuf b) {
        try {
            byte[] out = new byte[b.readableBytes()];
            b.getBytes(b.readerIndex(), out);
            return out;
        } finally {
            b.release();
        }
    }

    private static void flipBit(Path file, long position) throws Exception {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.seek(position);
            int b = f.read();
            f.seek(position);
            f.write(b ^ 0x01);
        }
    }

    private static byte[] random(int n, long seed) {
        return io.fastblock.storage.TestBuffers.random(n, seed);
    }

    @Test
    void badBlockIsAnsweredFromTheTailRepairedAndCounted() throws Exception {
        ChunkStore a = store("a", FileIoFactory.real());
        store("b", FileIoFactory.real());
        store("c", FileIoFactory.real());
        peers.groups.put(GROUP, CHAIN);
        ChunkId chunk = new ChunkId(9, 1);
        byte[] d = random(256 * 1024, 1);
        writeAll(1, chunk, 0, d);
        flipBit(a.fileOf(chunk), 70_000);
        IntegrityMetrics m = new IntegrityMetrics(new SimpleMeterRegistry());
        ReadRepair repair = new ReadRepair("a", a, peers, m);
        byte[] got = bytes(repair.read(CHAIN, ADDRESS, chunk, 65_000, 10_000, PooledByteBufAllocator.DEFAULT).get(10, TimeUnit.SECONDS));
        assertArrayEquals(java.util.Arrays.copyOfRange(d, 65_000, 75_000), got);
        assertEquals(1, peers.served("c"), "the tail answered");
        assertEquals(1.0, m.repairs.count());
        assertEquals(4096.0, m.repairedBytes.count(), "one block rewritten");
        assertArrayEquals(d, bytes(a.readAsync(chunk, 0, d.length, PooledByteBufAllocator.DEFAULT).get(10, TimeUnit.SECONDS)),
                "the local copy is good again");
    }

    @Test
    void whenTheTailIsDownTheMiddleAnswers() throws Exception {
        ChunkStore a = store("a", FileIoFactory.real());
        store("b", FileIoFactory.real());
        store("c", FileIoFactory.real());
        peers.groups.put(GROUP, CHAIN);
        peers.down.put("c", true);
        ChunkId chunk = new ChunkId(9, 2);
        byte[] d = random(8192, 2);
        writeAll(1, chunk, 0, d);
        flipBit(a.fileOf(chunk), 5000);
        IntegrityMetrics m = new IntegrityMetrics(new SimpleMeterRegistry());
        byte[] got = bytes(new ReadRepair("a", a, peers, m).read(CHAIN, ADDRESS, chunk, 0, 8192, PooledByteBufAllocator.DEFAULT)
                .get(10, TimeUnit.SECONDS));
        assertArrayEquals(d, got);
        assertEquals(1, peers.served("b"));
        assertEquals(1.0, m.repairs.count());
    }

    @Test
    void scrubberFindsAndRepairsAFlippedBitWithoutAnyRead() throws Exception {
        ChunkStore b = store("b", FileIoFactory.real());
        store("a", FileIoFactory.real());
        store("c", FileIoFactory.real());
        peers.groups.put(GROUP, CHAIN);
        List<ChunkId> written = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            ChunkId c = new ChunkId(10, i);
            writeAll(1, c, 0, random(1 << 20, 10 + i));
            written.add(c);
        }
        ChunkId victim = written.get(2);
        flipBit(b.fileOf(victim), 123_456);
        IntegrityMetrics m = new IntegrityMetrics(new SimpleMeterRegistry());
        ReadRepair repair = new ReadRepair("b", b, peers, m);
        long rate = 8L << 20;
        try (Scrubber s = new Scrubber("b", b, repair, c -> b.groupOf(c) == GROUP ? CHAIN : null, rate, NEVER)) {
            long t0 = System.nanoTime();
            Scrubber.PassReport r = s.pass();
            double seconds = (System.nanoTime() - t0) / 1e9;
            assertEquals(4, r.chunks());
            assertEquals(4L << 20, r.bytes());
            assertEquals(1, r.badStretches());
            assertEquals(4096, r.repairedBytes());
            // 4 MiB at 8 MiB/s: the pass cannot finish before half a second has gone by.
            assertTrue(seconds >= 0.45, "rate bound ignored: " + seconds + " s");
        }
        assertEquals(List.of(), b.verifyAsync(victim, 0, 256).get(10, TimeUnit.SECONDS));
        assertEquals(1.0, m.repairs.count());
        assertEquals(4.0, m.scrubbedChunks.count());
        assertEquals((double) (4 << 20), m.scrubbedBytes.count());
        assertTrue(m.lastFullPassMillis() > 0);
        assertEquals(0, peers.served("a") + peers.served("b"), "the scrubber repairs from the tail");
        assertEquals(1, peers.served("c"));
    }

    @Test
    void uncleanRestartResyncsDirtyChunksFromTheTailWhileNewWritesWin() throws Exception {
        FaultInjectingFileIo.Factory disk = new FaultInjectingFileIo.Factory(7);
        ChunkStore a = store("a", disk);
        store("b", FileIoFactory.real());
        ChunkStore c = store("c", FileIoFactory.real());
        peers.groups.put(GROUP, CHAIN);
        ChunkId clean = new ChunkId(11, 0);
        ChunkId hot = new ChunkId(11, 1);
        byte[] base = random(300_000, 3);
        writeAll(1, clean, 0, base);
        writeAll(2, hot, 0, base);
        a.flush();
        a.flush(); // a second checkpoint with no writes between: both chunks are clean
        byte[] later = random(50_000, 4);
        writeAll(3, hot, 100_000, later);
        writeAll(4, hot, 290_000, random(40_000, 5)); // extends the chunk past its forced size
        disk.powerLoss(FaultInjectingFileIo.Tear.LAST_WRITE);
        a.close();
        peers.stores.remove("a");
        disk.powerOn();
        ChunkStore a2 = new ChunkStore(dir.resolve("a"), 2, disk, NEVER);
        open.add(a2);
        assertEquals(List.of(hot), a2.pendingResync().stream().map(e -> e.chunk()).toList(), "only the chunk written since the checkpoint");
        IntegrityMetrics m = new IntegrityMetrics(new SimpleMeterRegistry());
        ReadRepair repair = new ReadRepair("a", a2, peers, m);
        // Before resync a read of the chunk is answered by the tail, not from the stale local copy.
        byte[] want = bytes(c.readAsync(hot, 0, 330_000, PooledByteBufAllocator.DEFAULT).get(10, TimeUnit.SECONDS));
        assertArrayEquals(want, bytes(repair.read(CHAIN, ADDRESS, hot, 0, 330_000, PooledByteBufAllocator.DEFAULT).get(10, TimeUnit.SECONDS)));
        assertEquals(1.0, m.remoteReads.count());
        // A write arriving during resync is newer than what is fetched and must survive it.
        byte[] fresh = {42, 42, 42};
        a2.writeAsync(GROUP, 5, hot, 1000, Unpooled.wrappedBuffer(fresh)).get(10, TimeUnit.SECONDS);
        c.writeAsync(GROUP, 5, hot, 1000, Unpooled.wrappedBuffer(fresh)).get(10, TimeUnit.SECONDS);
        try (ChunkResync resync = new ChunkResync("a", a2, peers, peers, m, 100)) {
            resync.start().get(30, TimeUnit.SECONDS);
        }
        assertEquals(1.0, m.resyncedChunks.count());
        assertEquals(0, m.resyncPending());
        byte[] tail = bytes(c.readAsync(hot, 0, 330_000, PooledByteBufAllocator.DEFAULT).get(10, TimeUnit.SECONDS));
        assertArrayEquals(tail, bytes(a2.readAsync(hot, 0, 330_000, PooledByteBufAllocator.DEFAULT).get(10, TimeUnit.SECONDS)));
        assertArrayEquals(base, bytes(a2.readAsync(clean, 0, base.length, PooledByteBufAllocator.DEFAULT).get(10, TimeUnit.SECONDS)));
        assertEquals(List.<BlockRange>of(), a2.verifyAsync(hot, 0, 100).get(10, TimeUnit.SECONDS));
    }

    @Test
    void resyncRetriesUntilTheTailAnswers() throws Exception {
        FaultInjectingFileIo.Factory disk = new FaultInjectingFileIo.Factory(8);
        ChunkStore a = store("a", disk);
        store("c", FileIoFactory.real());
        peers.groups.put(GROUP, CHAIN);
        ChunkId chunk = new ChunkId(12, 0);
        byte[] d = random(10_000, 6);
        writeAll(1, chunk, 0, d);
        disk.powerLoss(FaultInjectingFileIo.Tear.NONE);
        a.close();
        peers.stores.remove("a");
        disk.powerOn();
        ChunkStore a2 = new ChunkStore(dir.resolve("a"), 2, disk, NEVER);
        open.add(a2);
        peers.down.put("c", true);
        IntegrityMetrics m = new IntegrityMetrics(new SimpleMeterRegistry());
        try (ChunkResync resync = new ChunkResync("a", a2, peers, peers, m, 50)) {
            CompletableFuture<Void> done = resync.start();
            Thread.sleep(300);
            assertTrue(!done.isDone() && a2.isResyncing(chunk), "no tail, no resync");
            peers.down.put("c", false);
            done.get(10, TimeUnit.SECONDS);
        }
        assertArrayEquals(d, bytes(a2.readAsync(chunk, 0, d.length, PooledByteBufAllocator.DEFAULT).get(10, TimeUnit.SECONDS)));
    }
}
