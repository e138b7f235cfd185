package io.fastblock.storage.integrity;

import io.fastblock.storage.io.ByteRateLimiter;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.Status;
import io.fastblock.storage.StorageServer;
import io.fastblock.storage.TestBuffers;
import io.fastblock.storage.chain.TailLayout;
import io.fastblock.storage.log.LogScrubber;
import io.fastblock.storage.log.LogStore;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Acceptance: bits flipped in a chunk file (head, middle) and in a log segment (tail). Reads
 * still return the right data, the bad copy is repaired (a local re-read is good) and the
 * repair is counted; the chunk scrubber finds and repairs a flip without any client read.
 */
@org.junit.jupiter.api.TestInstance(org.junit.jupiter.api.TestInstance.Lifecycle.PER_CLASS)
class CorruptionTest {
    private static final int SIZE = 256 * 1024;

    private Path dir;
    private ThreeNodeChain chain;

    /** The tail layout of the chain (see {@link LogLayoutCorruptionTest}). */
    TailLayout layout() {
        return TailLayout.LOG_AND_IN_PLACE;
    }

    @BeforeAll
    void start(@TempDir Path tmp) throws Exception {
        dir = tmp;
        chain = new ThreeNodeChain(dir, 3, layout());
    }

    @AfterAll
    void stop() throws Exception {
        chain.close();
    }

    private byte[] written(ChunkId chunk, long seed) throws Exception {
        byte[] d = new byte[SIZE];
        new Random(seed).nextBytes(d);
        assertEquals(Status.OK, chain.write(chunk, 0, d).status());
        return d;
    }

    private static void flipBit(Path file, long position) throws Exception {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.seek(position);
            int b = f.read();
            f.seek(position);
            f.write(b ^ 0x04);
        }
    }

    private static byte[] localRead(StorageServer s, ChunkId chunk) throws Exception {
        return TestBuffers.drain(s.chunkStore().readAsync(chunk, 0, SIZE, PooledByteBufAllocator.DEFAULT).get(10, TimeUnit.SECONDS), SIZE);
    }

    private void readRepairsFlipOn(String node, ChunkId chunk, long seed) throws Exception {
        byte[] d = written(chunk, seed);
        StorageServer s = chain.server(node);
        IntegrityMetrics m = s.integrity().metrics();
        double repairs = m.repairs.count();
        flipBit(s.chunkStore().fileOf(chunk), 100_000);
        assertEquals(1, s.chunkStore().verifyAsync(chunk, 0, SIZE / 4096).get(10, TimeUnit.SECONDS).size(), "the flip is there");
        assertArrayEquals(d, chain.read(node, chunk, 0, SIZE), "read at " + node + " answered correctly");
        assertEquals(repairs + 1, m.repairs.count(), "repair counted at " + node);
        assertArrayEquals(d, localRead(s, chunk), "local copy at " + node + " repaired");
        assertTrue(s.metrics().registry().find("fastblock.integrity.repairs").counter().count() >= 1);
    }

    @Test
    void flippedBitInTheHeadsChunkFileIsAnsweredAndRepaired() throws Exception {
        readRepairsFlipOn("a", new ChunkId(20, 0), 1);
    }

    @Test
    void flippedBitInTheMiddlesChunkFileIsAnsweredAndRepaired() throws Exception {
        readRepairsFlipOn("b", new ChunkId(20, 1), 2);
    }

    @Test
    void flippedBitInTheTailsLogSegmentIsFoundByTheLogScrubberAndReappended() throws Exception {
        ChunkId chunk = new ChunkId(21, 0);
        byte[] d = written(chunk, 3);
        StorageServer tail = chain.server("c");
        LogStore log = tail.logStore();
        Path segment;
        try (Stream<Path> segs = Files.list(dir.resolve("c").resolve("log"))) {
            segment = segs.filter(p -> p.toString().endsWith(".seg")).sorted().reduce((x, y) -> y).orElseThrow();
        }
        if (layout() == TailLayout.LOG) {
            // A tail of the log layout does not write its chunk files: what they hold (here, bytes
            // from before it became tail) is older than the log and must not be taken as the repair.
            tail.chunkStore().writeAsync(chunk, 0, io.netty.buffer.Unpooled.wrappedBuffer(new byte[SIZE])).get(10, TimeUnit.SECONDS);
        }
        // The write just made is the last record of the newest segment: flip a bit in its data.
        flipBit(segment, Files.size(segment) - SIZE / 2);
        IntegrityMetrics m = tail.integrity().metrics();
        // Before any repair, a client read at the tail still gets the right bytes (in the log
        // layout from the other members, the tail's own copy being the bad record).
        double remoteReads = m.remoteReads.count();
        assertArrayEquals(d, chain.read("c", chunk, 0, SIZE), "read at the tail with its log record bad");
        if (layout() == TailLayout.LOG) {
            assertEquals(remoteReads + 1, m.remoteReads.count(), "answered by another member");
        }
        double repairs = m.repairs.count();
        LogScrubber scrubber = new LogScrubber(log, new ByteRateLimiter(256L << 20), tail.integrity().logRepair(log::rewrite));
        LogScrubber.Pass first = scrubber.scrubOnce();
        assertTrue(first.corruptions() >= 1, "the log scrubber saw the flip: " + first);
        long deadline = System.currentTimeMillis() + 10_000;
        while (m.repairs.count() < repairs + 1 && System.currentTimeMillis() < deadline) {
            Thread.sleep(20);
        }
        assertEquals(repairs + 1, m.repairs.count(), "log repair counted");
        assertEquals(0, scrubber.scrubOnce().corruptions(), "the re-appended record replaced the bad one");
        ByteBuf fromLog = log.readAsync(chunk, 0, SIZE, PooledByteBufAllocator.DEFAULT).get(10, TimeUnit.SECONDS);
        byte[] got = new byte[SIZE];
        fromLog.getBytes(fromLog.readerIndex(), got);
        fromLog.release();
        assertArrayEquals(d, got, "the tail's log holds the right bytes again");
        assertArrayEquals(d, chain.read("c", chunk, 0, SIZE));
    }

    @Test
    void scrubberRepairsAFlippedBitWithoutAnyClientRead() throws Exception {
        ChunkId chunk = new ChunkId(22, 0);
        byte[] d = written(chunk, 4);
        StorageServer middle = chain.server("b");
        IntegrityMetrics m = middle.integrity().metrics();
        double repairs = m.repairs.count();
        double remoteReads = m.remoteReads.count();
        flipBit(middle.chunkStore().fileOf(chunk), 12_345);
        Scrubber.PassReport r = middle.integrity().scrubber().pass();
        assertTrue(r.badStretches() >= 1 && r.repairedBytes() >= 4096, r.toString());
        assertEquals(repairs + 1, m.repairs.count());
        assertEquals(remoteReads, m.remoteReads.count(), "no client read was involved");
        assertEquals(List.of(), middle.chunkStore().verifyAsync(chunk, 0, SIZE / 4096).get(10, TimeUnit.SECONDS));
        assertArrayEquals(d, localRead(middle, chunk));
        assertTrue(m.scrubbedBytes.count() >= SIZE && m.lastFullPassMillis() > 0);
    }
}
