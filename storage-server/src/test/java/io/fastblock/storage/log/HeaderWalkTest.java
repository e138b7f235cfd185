package io.fastblock.storage.log;

import static io.fastblock.storage.log.LogFixture.bytes;
import static io.fastblock.storage.log.LogFixture.write;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.StorageMetrics;
import io.fastblock.storage.io.ReadCountingFiles;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cleaner's header walk finds the same records as reading the whole segment and parsing it, in
 * mixed segments (small writes, large writes, trims), and reads little more than
 * the headers of large records.
 */
class HeaderWalkTest {
    private static final int K = 4096;

    @TempDir
    Path dir;

    @Test
    void findsEveryRecordOfMixedSegmentsAsAWholeReadDoes() throws Exception {
        Random r = new Random(3);
        ChunkId c = new ChunkId(9, 0);
        try (LogStore store = LogStore.open(dir, 4 << 20, new StorageMetrics())) {
            for (int i = 0; i < 400; i++) {
                int kind = r.nextInt(10);
                long off = (long) K * r.nextInt(512);
                if (kind == 0) {
                    store.trim(c, off, i + 1, K * (1 + r.nextInt(8))).get(30, TimeUnit.SECONDS);
                } else if (kind < 4) {
                    write(store, c, off, bytes(K * (8 + r.nextInt(64)), i)); // 32-284 KiB: some stepped over
                } else {
                    write(store, c, off, bytes(K * (1 + r.nextInt(4)), i));
                }
            }
            List<LogSegment> sealed = store.sealedSegments();
            assertTrue(sealed.size() >= 3, "several sealed segments: " + sealed.size());
            for (LogSegment s : sealed) {
                List<String> walked = new ArrayList<>();
                new HeaderWalk(s).walk(s.size(), (pos, h) -> walked.add(pos + ":" + h));
                assertEquals(wholeRead(s), walked, "segment " + s.number());
            }
        }
    }

    @Test
    void largeRecordsCostOneSmallReadEachAndSmallOnesAWindow() throws Exception {
        ChunkId c = new ChunkId(9, 1);
        try (LogStore store = LogStore.open(dir, 16 << 20, new StorageMetrics())) {
            for (int i = 0; i < 40; i++) {
                write(store, c, (long) (i % 8) << 20, bytes(1 << 20, i));
            }
            for (int i = 0; i < 8000; i++) {
                write(store, c, (long) K * (i % 2048), bytes(K, i));
            }
            long largeRead = -1;
            long smallRead = -1;
            for (LogSegment s : store.sealedSegments()) {
                HeaderWalk walk = new HeaderWalk(s);
                List<Integer> sizes = new ArrayList<>();
                walk.walk(s.size(), (pos, h) -> sizes.add(h.size()));
                if (sizes.stream().allMatch(n -> n > (1 << 20))) {
                    // the first read is a window, then one header alone per record
                    assertEquals(sizes.size(), walk.reads(), "reads for " + sizes.size() + " records of 1 MiB");
                    assertTrue(walk.bytesRead() <= HeaderWalk.WINDOW + (long) sizes.size() * LogRecord.HEADER_MOVED,
                            walk.bytesRead() + " bytes read for " + sizes.size() + " records of 1 MiB");
                    largeRead = walk.bytesRead();
                } else if (sizes.stream().allMatch(n -> n < 2 * K)) {
                    // windows, each starting at the first header the one before did not hold: a read per
                    // 63 records, and all bytes but the tails of records cut by a window's end
                    long windows = s.size() / (HeaderWalk.WINDOW - 2 * K) + 1;
                    assertTrue(walk.reads() <= windows, walk.reads() + " reads for " + sizes.size() + " records");
                    assertTrue(walk.bytesRead() >= s.size() - walk.reads() * (long) K && walk.bytesRead() <= s.size(),
                            walk.bytesRead() + " bytes read for a segment of " + s.size());
                    smallRead = walk.bytesRead();
                }
            }
            assertTrue(largeRead >= 0 && smallRead >= 0, "both kinds of segment were walked: " + largeRead + ", " + smallRead);
        }
    }

    @Test
    void recordsOfTheCleanersPieceSizeShareWindows() throws Exception {
        ChunkId c = new ChunkId(9, 3);
        try (LogStore store = LogStore.open(dir, 4 << 20, new StorageMetrics())) {
            for (int i = 0; i < 200; i++) {
                write(store, c, (long) (i % 16) * 32 * K, bytes(16 * K, i)); // 64 KiB with gaps
            }
            LogSegment s = store.sealedSegments().get(0);
            HeaderWalk walk = new HeaderWalk(s);
            List<Integer> sizes = new ArrayList<>();
            walk.walk(s.size(), (pos, h) -> sizes.add(h.size()));
            // a 256 KiB window holds the headers of four 64 KiB records
            assertTrue(sizes.size() >= 60 && walk.reads() <= sizes.size() / 3, walk.reads() + " reads for " + sizes.size()
                    + " records of 64 KiB");
        }
    }

    @Test
    void aPositionWithoutAHeaderIsCorruptionWhetherReadInAWindowOrAlone() throws Exception {
        ChunkId c = new ChunkId(9, 2);
        try (LogStore store = LogStore.open(dir, 1 << 20, new StorageMetrics())) {
            for (int i = 0; i < 300; i++) {
                write(store, c, 0, bytes(i < 200 ? 2 * K : 48 * K, i)); // small records first, then large ones
            }
            boolean windowed = false;
            boolean alone = false;
            for (LogSegment s : store.sealedSegments()) {
                List<Long> positions = new ArrayList<>();
                List<Integer> sizes = new ArrayList<>();
                new HeaderWalk(s).walk(s.size(), (pos, h) -> {
                    positions.add(pos);
                    sizes.add(h.dataBytes());
                });
                if (positions.size() < 3 || sizes.stream().distinct().count() != 1) {
                    continue;
                }
                windowed |= sizes.get(0) == 2 * K;
                alone |= sizes.get(0) == 48 * K;
                long bad = positions.get(positions.size() - 2);
                try (FileChannel ch = FileChannel.open(s.path(), StandardOpenOption.WRITE)) {
                    ch.write(ByteBuffer.allocate(4), bad); // a header's magic, zeroed
                }
                CorruptRecordException e = assertThrows(CorruptRecordException.class,
                        () -> new HeaderWalk(s).walk(s.size(), (pos, h) -> { }));
                assertTrue(e.getMessage().contains("position " + bad), e.getMessage());
            }
            assertTrue(windowed && alone, "segments of both kinds: " + windowed + ", " + alone);
        }
    }

    @Test
    void theWalkReadsAroundThePageCacheWhereTheFilesAllowAndFindsTheSameRecordsEitherWay() throws Exception {
        List<List<String>> found = new ArrayList<>();
        for (boolean direct : new boolean[] {true, false}) {
            Path d = dir.resolve("direct-" + direct);
            java.nio.file.Files.createDirectories(d);
            ReadCountingFiles files = ReadCountingFiles.in(d, direct);
            Random r = new Random(5);
            ChunkId c = new ChunkId(9, 4);
            try (LogStore store = LogStore.open(d, 1 << 20, new StorageMetrics(), BaseFiles.NONE, 0, files)) {
                for (int i = 0; i < 300; i++) {
                    // odd sizes, so that most windows start between two of the device's blocks
                    write(store, c, (long) K * r.nextInt(256), bytes(K * (1 + r.nextInt(3)) + 24 * r.nextInt(9), i));
                }
                List<String> walked = new ArrayList<>();
                long sizes = 0;
                for (LogSegment s : store.sealedSegments()) {
                    files.directBytes.set(0);
                    files.bufferedBytes.set(0);
                    HeaderWalk walk = new HeaderWalk(s);
                    walk.walk(s.size(), (pos, h) -> walked.add(s.number() + "@" + pos + ":" + h));
                    sizes += s.size();
                    // all bytes but the tails of records cut by a window's end (the next window starts at the next header)
                    long least = s.size() - walk.reads() * 4L * K;
                    AtomicLong other = direct ? files.bufferedBytes : files.directBytes;
                    AtomicLong through = direct ? files.directBytes : files.bufferedBytes;
                    assertEquals(0, other.get(), "segment " + s.number() + " read " + (direct ? "through" : "around")
                            + " the page cache");
                    assertTrue(through.get() >= least && walk.bytesRead() >= least, through.get() + " bytes read"
                            + " for a segment of " + s.size());
                }
                assertTrue(store.sealedSegments().size() >= 2 && sizes > 0, "sealed segments walked");
                found.add(walked);
            }
        }
        assertEquals(found.get(1), found.get(0), "the same records read around the page cache and through it");
    }

    /** Every header of the segment, found by reading all of it and parsing record after record. */
    private static List<String> wholeRead(LogSegment s) throws IOException {
        ByteBuffer all = ByteBuffer.allocate((int) s.size());
        assertTrue(s.readFully(0, all));
        all.flip();
        List<String> out = new ArrayList<>();
        int pos = 0;
        while (pos < all.limit()) {
            LogRecord.Header h = LogRecord.parse(all.duplicate().position(pos));
            out.add(pos + ":" + h);
            pos += h.size();
        }
        return out;
    }
}
