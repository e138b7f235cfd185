package io.fastblock.storage.integrity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.Status;
import io.fastblock.storage.BackgroundRates;
import io.fastblock.storage.StorageServer;
import io.fastblock.storage.StorageServerConfig;
import io.fastblock.storage.TestBuffers;
import io.fastblock.storage.chunk.ChunkChecksumTest;
import io.fastblock.storage.chunk.ChunkStore;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The storage server runs the chunk scrubber at the rate and pause its flags give (--scrub-rate,
 * --scrub-pause-ms; 0 turns it off): a bit flipped on the disk under a head's chunk file is found
 * and repaired without any client read.
 */
class ServerChunkScrubTest {
    private static final int SIZE = 256 * 1024;

    @TempDir
    Path dir;

    @Test
    void theServersOwnChunkScrubberFindsAndRepairsAFlippedBit() throws Exception {
        BackgroundRates rates = new BackgroundRates(BackgroundRates.DEFAULTS.copyBytesPerSecond(), 0, 600_000, 64L << 20, 100);
        try (ThreeNodeChain chain = new ThreeNodeChain(dir, 7, rates)) {
            ChunkId chunk = new ChunkId(41, 0);
            byte[] d = TestBuffers.random(SIZE, 41);
            assertEquals(Status.OK, chain.write(chunk, 0, d).status());
            StorageServer head = chain.server("a");
            assertNotNull(head.integrity().scrubber(), "the server started its chunk scrubber");
            assertNull(head.logScrubber(), "--log-scrub-rate 0 leaves the log scrubber off");
            ChunkStore store = head.chunkStore();
            store.force(chunk); // on the disk: the flip below then changes what the disk holds
            IntegrityMetrics m = head.integrity().metrics();
            double repairs = m.repairs.count();
            ChunkChecksumTest.flipBit(store.fileOf(chunk), 5 * 4096 + 77);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (m.repairs.count() < repairs + 1 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertEquals(repairs + 1, m.repairs.count(), "the server's scrubber found and repaired the flip");
            assertEquals(List.of(), store.verifyAsync(chunk, 0, SIZE / 4096).get(10, TimeUnit.SECONDS));
            assertArrayEquals(d, chain.read("a", chunk, 0, SIZE));
        }
    }

    @Test
    void scrubFlagsAreParsedAndZeroTurnsTheChunkScrubberOff() throws Exception {
        StorageServerConfig c = StorageServerConfig.fromArgs("--data-dir=/tmp/x", "--scrub-rate=16M", "--scrub-pause-ms=5000");
        assertEquals(16L << 20, c.background().scrubBytesPerSecond());
        assertEquals(5000, c.background().scrubPauseMillis());
        assertEquals(BackgroundRates.DEFAULTS.logScrubBytesPerSecond(), c.background().logScrubBytesPerSecond(),
                "the log scrubber keeps its own rate");
        assertEquals(8L << 20, BackgroundRates.DEFAULTS.scrubBytesPerSecond());
        assertTrue(StorageServerConfig.fromArgs("--data-dir=/tmp/x").background().scrub());
        assertTrue(!StorageServerConfig.fromArgs("--data-dir=/tmp/x", "--scrub-rate=0").background().scrub());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> StorageServerConfig.fromArgs("--data-dir=/tmp/x", "--scrub-pause-ms=-5"));
        assertTrue(e.getMessage().contains("--scrub-pause-ms"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> StorageServerConfig.fromArgs("--data-dir=/tmp/x", "--scrub-rate=fast"));
        assertTrue(e.getMessage().contains("--scrub-rate"), e.getMessage());

        BackgroundRates off = new BackgroundRates(0, 0, 600_000, 0, 600_000);
        try (ThreeNodeChain chain = new ThreeNodeChain(dir, 8, off)) {
            assertNull(chain.server("a").integrity().scrubber(), "--scrub-rate 0: no chunk scrubber");
        }
    }
}
