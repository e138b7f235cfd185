package io.fastblock.storage.log;

import io.fastblock.storage.io.ByteRateLimiter;
import static io.fastblock.storage.log.LogFixture.bytes;
import static io.fastblock.storage.log.LogFixture.read;
import static io.fastblock.storage.log.LogFixture.write;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.StorageMetrics;
import java.io.RandomAccessFile;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LogScrubberTest {
    private static final ChunkId A = new ChunkId(5, 0);
    private static final ChunkId B = new ChunkId(5, 1);

    @TempDir
    Path dir;

    private static void flip(Path segment, long at) throws Exception {
        try (RandomAccessFile f = new RandomAccessFile(segment.toFile(), "rw")) {
            f.seek(at);
            int v = f.read();
            f.seek(at);
            f.write(v ^ 0x08);
        }
    }

    @Test
    void scrubVerifiesLiveRecordsReportsCorruptExtentsAndSkipsDeadOnes() throws Exception {
        StorageMetrics metrics = new StorageMetrics();
        try (LogStore store = LogStore.open(dir, 1 << 20, metrics)) {
            int rec = LogRecord.HEADER + 1000;
            write(store, A, 0, bytes(1000, 1));        // record 0: dead after record 1
            write(store, A, 0, bytes(1000, 2));        // record 1: live
            write(store, B, 5000, bytes(1000, 3));     // record 2: live, about to be damaged
            write(store, B, 9000, bytes(1000, 4));     // record 3: live
            Path seg = LogSegment.pathOf(dir.resolve("log"), 1);
            flip(seg, 0L * rec + LogRecord.HEADER + 5);   // dead record: nobody reads it, not reported
            flip(seg, 2L * rec + LogRecord.HEADER + 999);

            List<String> reported = new ArrayList<>();
            LogScrubber scrubber = new LogScrubber(store, new ByteRateLimiter(0),
                    (chunk, extent, cause) -> reported.add(chunk + "@" + extent.chunkOffset() + "+" + extent.length()));
            LogScrubber.Pass pass = scrubber.scrubOnce();

            assertEquals(List.of(B + "@5000+1000"), reported);
            assertEquals(new LogScrubber.Pass(2000, 2, 1), pass);
            assertEquals(2000.0, metrics.registry().get("fastblock.log.scrub.bytes").counter().count());
            assertEquals(1.0, metrics.registry().get("fastblock.log.scrub.corruptions").counter().count());

            // the repair path: the good bytes written again make the bad record dead; the next pass is clean
            write(store, B, 5000, bytes(1000, 3));
            reported.clear();
            assertEquals(0, scrubber.scrubOnce().corruptions());
            assertTrue(reported.isEmpty());
            assertArrayEquals(bytes(1000, 3), read(store, B, 5000, 1000));
        }
    }

    /**
     * A repair replaces only the bytes that still read from the bad run: bytes fetched from a
     * replica before a newer write of part of the range landed must not shadow that write, on the
     * live index or after a reopen (replay). Appending the repair as a plain write did.
     */
    @Test
    void aRepairNeverShadowsAWriteThatLandedAfterItsBytesWereFetched() throws Exception {
        Path log = dir.resolve("cas");
        byte[] good = bytes(8000, 3);
        byte[] newer = bytes(1000, 9);
        try (LogStore store = LogStore.open(log, 1 << 20, new StorageMetrics())) {
            write(store, B, 0, good);
            flip(LogSegment.pathOf(log.resolve("log"), 1), LogRecord.HEADER + 100);
            List<Extent> bad = new ArrayList<>();
            new LogScrubber(store, new ByteRateLimiter(0), (chunk, extent, cause) -> bad.add(extent)).scrubOnce();
            assertEquals(1, bad.size());
            write(store, B, 2000, newer);              // lands while the repair fetches its bytes
            Extent e = bad.get(0);
            store.rewrite(B, e.chunkOffset(), e.sequence(), e.segment(), e.recordPosition(),
                    io.netty.buffer.Unpooled.wrappedBuffer(good.clone())).get(10, java.util.concurrent.TimeUnit.SECONDS);
            byte[] want = good.clone();
            System.arraycopy(newer, 0, want, 2000, newer.length);
            assertArrayEquals(want, read(store, B, 0, 8000), "repaired around the newer write");
            assertEquals(0, new LogScrubber(store, new ByteRateLimiter(0), (c, x, err) -> { }).scrubOnce().corruptions(),
                    "nothing reads the bad record any more");
        }
        try (LogStore store = LogStore.open(log, 1 << 20, new StorageMetrics())) {
            byte[] want = good.clone();
            System.arraycopy(newer, 0, want, 2000, newer.length);
            assertArrayEquals(want, read(store, B, 0, 8000), "the same after a reopen");
        }
    }

    @Test
    void scrubIsPacedByItsLimiter() throws Exception {
        try (LogStore store = LogStore.open(dir, 1 << 20, new StorageMetrics())) {
            for (int i = 0; i < 8; i++) {
                write(store, A, i * 100_000L, bytes(64 * 1024, i));
            }
            long start = System.nanoTime();
            LogScrubber.Pass pass = new LogScrubber(store, new ByteRateLimiter(1 << 20), (c, x, e) -> { }).scrubOnce();
            double seconds = (System.nanoTime() - start) / 1e9;
            assertEquals(8L * 64 * 1024, pass.bytes());
            // 512 KiB at 1 MiB/s: at least (512 - 64) KiB worth of waiting; the first grant is free
            assertTrue(seconds >= 0.4, "took " + seconds + " s");
        }
    }
}
