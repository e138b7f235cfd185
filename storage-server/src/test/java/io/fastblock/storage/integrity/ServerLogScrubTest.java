package io.fastblock.storage.integrity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.Status;
import io.fastblock.storage.BackgroundRates;
import io.fastblock.storage.StorageServer;
import io.fastblock.storage.StorageServerConfig;
import io.fastblock.storage.log.LogStore;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The storage server runs the log scrubber itself (--log-scrub-rate, --log-scrub-pause-ms): a bit
 * flipped in the tail's log segment is found without any client read or test-driven pass,
 * repaired from a replica and counted.
 */
class ServerLogScrubTest {
    private static final int SIZE = 128 * 1024;

    @TempDir
    Path dir;

    @Test
    void theServersOwnScrubberFindsRepairsAndCountsAFlippedBitInALogSegment() throws Exception {
        BackgroundRates rates = new BackgroundRates(BackgroundRates.DEFAULTS.copyBytesPerSecond(), 64L << 20, 200);
        try (ThreeNodeChain chain = new ThreeNodeChain(dir, 5, rates)) {
            ChunkId chunk = new ChunkId(31, 0);
            byte[] d = new byte[SIZE];
            new Random(31).nextBytes(d);
            assertEquals(Status.OK, chain.write(chunk, 0, d).status());
            StorageServer tail = chain.server("c");
            assertNotNull(tail.logScrubber(), "the server started its log scrubber");
            LogStore log = tail.logStore();
            Path segment;
            try (Stream<Path> segs = Files.list(dir.resolve("c").resolve("log"))) {
                segment = segs.filter(p -> p.toString().endsWith(".seg")).sorted().reduce((x, y) -> y).orElseThrow();
            }
            IntegrityMetrics m = tail.integrity().metrics();
            double repairs = m.repairs.count();
            double found = log.logMetrics().scrubCorruptions.count();
            try (RandomAccessFile f = new RandomAccessFile(segment.toFile(), "rw")) {
                long at = Files.size(segment) - SIZE / 2;
                f.seek(at);
                int b = f.read();
                f.seek(at);
                f.write(b ^ 0x10);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while ((m.repairs.count() < repairs + 1 || log.logMetrics().scrubCorruptions.count() < found + 1)
                    && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertTrue(log.logMetrics().scrubCorruptions.count() >= found + 1, "the server's scrubber found the flip");
            assertEquals(repairs + 1, m.repairs.count(), "the repair is counted once");
            ByteBuf fromLog = log.readAsync(chunk, 0, SIZE, PooledByteBufAllocator.DEFAULT).get(10, TimeUnit.SECONDS);
            byte[] got = new byte[SIZE];
            try {
                fromLog.getBytes(fromLog.readerIndex(), got);
            } finally {
                fromLog.release();
            }
            assertArrayEquals(d, got, "the tail's log holds the right bytes again");
            assertArrayEquals(d, chain.read("c", chunk, 0, SIZE));
        }
    }

    @Test
    void rateZeroTurnsTheLogScrubberOffAndFlagsAreParsed() {
        StorageServerConfig c = StorageServerConfig.fromArgs("--data-dir=/tmp/x", "--log-scrub-rate=0", "--copy-rate=16M",
                "--log-scrub-pause-ms=1000");
        assertEquals(0, c.background().logScrubBytesPerSecond());
        assertEquals(16L << 20, c.background().copyBytesPerSecond());
        assertEquals(1000, c.background().logScrubPauseMillis());
        assertEquals(BackgroundRates.DEFAULTS, StorageServerConfig.fromArgs("--data-dir=/tmp/x").background());
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> StorageServerConfig.fromArgs("--data-dir=/tmp/x", "--log-scrub-pause-ms=-1"));
        assertTrue(e.getMessage().contains("--log-scrub-pause-ms"), e.getMessage());
    }
}
