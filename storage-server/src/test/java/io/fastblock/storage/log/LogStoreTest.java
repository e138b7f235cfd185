package io.fastblock.storage.log;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.StorageMetrics;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LogStoreTest {
    private static final ChunkId CHUNK = new ChunkId(7, 3);
    private static final long SEGMENT = 64 * 1024;

    @TempDir
    Path dir;
    private final StorageMetrics metrics = new StorageMetrics();
    private LogStore store;

    @AfterEach
    void close() throws IOException {
        if (store != null) {
            store.close();
        }
    }

    private LogStore open() throws IOException {
        store = LogStore.open(dir, SEGMENT, metrics);
        return store;
    }

    private void reopen() throws IOException {
        store.close();
        store = null;
        open();
    }

    private static byte[] bytes(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    private void write(ChunkId chunk, long offset, byte[] data) throws Exception {
        store.append(chunk, offset, 1, Unpooled.wrappedBuffer(data)).get(10, TimeUnit.SECONDS);
    }

    private byte[] read(ChunkId chunk, long offset, int length) throws IOException {
        return LogFixture.read(store, chunk, offset, length);
    }

    @Test
    void appendThenReadReturnsDataAndZerosAround() throws Exception {
        open();
        byte[] data = bytes(5000, 1);
        write(CHUNK, 1000, data);
        byte[] got = read(CHUNK, 0, 8000);
        byte[] want = new byte[8000];
        System.arraycopy(data, 0, want, 1000, data.length);
        assertArrayEquals(want, got);
        assertArrayEquals(new byte[100], read(new ChunkId(7, 4), 1000, 100), "other chunk is untouched");
    }

    @Test
    void overlapShapesLaterWriteWins() throws Exception {
        open();
        byte[] ref = new byte[4096];
        // base, then: inside, over the left edge, over the right edge, covering several extents
        long[][] shapes = {{1000, 2000}, {1500, 100}, {900, 200}, {2900, 300}, {800, 2600}, {1200, 10}, {1211, 10}};
        long seed = 10;
        for (long[] s : shapes) {
            byte[] d = bytes((int) s[1], seed++);
            write(CHUNK, s[0], d);
            System.arraycopy(d, 0, ref, (int) s[0], d.length);
            assertArrayEquals(ref, read(CHUNK, 0, ref.length), "after write at " + s[0] + "+" + s[1]);
        }
    }

    @Test
    void randomOverwritesMatchAReferenceArrayAcrossSegmentsAndRestart() throws Exception {
        open();
        int size = 48 * 1024;
        byte[] ref = new byte[size];
        Random r = new Random(42);
        for (int round = 0; round < 60; round++) {
            // several appends in flight at once so batches mix overlapping writes
            List<CompletableFuture<Void>> inFlight = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                int len = 1 + r.nextInt(r.nextBoolean() ? 64 : 4096);
                int off = r.nextInt(size - len);
                byte[] d = bytes(len, r.nextLong());
                System.arraycopy(d, 0, ref, off, len);
                inFlight.add(store.append(CHUNK, off, round * 8L + i, Unpooled.wrappedBuffer(d)));
            }
            for (CompletableFuture<Void> f : inFlight) {
                f.get(10, TimeUnit.SECONDS);
            }
            int off = r.nextInt(size);
            int len = r.nextInt(size - off);
            assertArrayEquals(java.util.Arrays.copyOfRange(ref, off, off + len), read(CHUNK, off, len));
        }
        assertArrayEquals(ref, read(CHUNK, 0, size));
        assertTrue(Files.exists(LogSegment.pathOf(dir.resolve("log"), 2)), "log rolled over to a second segment");
        reopen();
        assertArrayEquals(ref, read(CHUNK, 0, size));
    }

    @Test
    void recordsAfterTheCheckpointAreReplayedOnOpen() throws Exception {
        open();
        byte[] a = bytes(3000, 1);
        write(CHUNK, 0, a);
        store.close();
        store = null;
        Path snapshot = dir.resolve("index-snapshot");
        copyTree(dir.resolve("index"), snapshot);
        open();
        byte[] b = bytes(3000, 2);
        byte[] c = bytes(500, 3);
        write(CHUNK, 2000, b);
        write(new ChunkId(8, 0), 100, c);
        store.close();
        store = null;
        // The index loses its latest updates (as if they never reached disk): only the log has them.
        replaceTree(snapshot, dir.resolve("index"));
        open();
        assertEquals(2, store.recovery().replayedRecords());
        byte[] want = new byte[5000];
        System.arraycopy(a, 0, want, 0, 3000);
        System.arraycopy(b, 0, want, 2000, 3000);
        assertArrayEquals(want, read(CHUNK, 0, 5000));
        assertArrayEquals(c, read(new ChunkId(8, 0), 100, 500));
    }

    @Test
    void tornLastRecordIsCutAndEarlierRecordsSurvive() throws Exception {
        open();
        byte[] a = bytes(3000, 1);
        write(CHUNK, 0, a);
        store.close();
        store = null;
        Path snapshot = dir.resolve("index-snapshot");
        copyTree(dir.resolve("index"), snapshot);
        open();
        byte[] b = bytes(3000, 2);
        write(CHUNK, 1000, b);
        store.close();
        store = null;
        replaceTree(snapshot, dir.resolve("index"));
        Path seg = LogSegment.pathOf(dir.resolve("log"), 1);
        long full = Files.size(seg);
        try (RandomAccessFile f = new RandomAccessFile(seg.toFile(), "rw")) {
            f.setLength(full - 1500); // mid-way through the second record's data
        }
        open();
        assertEquals(0, store.recovery().replayedRecords());
        assertEquals(full - 1500 - (LogRecord.HEADER + 3000), store.recovery().truncatedBytes());
        byte[] want = new byte[4000];
        System.arraycopy(a, 0, want, 0, 3000);
        assertArrayEquals(want, read(CHUNK, 0, 4000));
        assertEquals(LogRecord.HEADER + 3000, Files.size(seg));
        // the log keeps working after the cut
        write(CHUNK, 3500, b);
        reopen();
        System.arraycopy(b, 0, want, 3500, 500);
        assertArrayEquals(want, read(CHUNK, 0, 4000));
    }

    @Test
    void flippedDataByteOnDiskFailsTheRead() throws Exception {
        open();
        write(CHUNK, 0, bytes(4096, 1));
        write(CHUNK, 8192, bytes(4096, 2));
        Path seg = LogSegment.pathOf(dir.resolve("log"), 1);
        try (RandomAccessFile f = new RandomAccessFile(seg.toFile(), "rw")) {
            long at = LogRecord.HEADER + 100;
            f.seek(at);
            int v = f.read();
            f.seek(at);
            f.write(v ^ 0x01);
        }
        CorruptRecordException e = assertThrows(CorruptRecordException.class, () -> read(CHUNK, 0, 10));
        assertTrue(e.getMessage().contains("CRC32C"), e.getMessage());
        assertArrayEquals(bytes(4096, 2), read(CHUNK, 8192, 4096), "the other record still reads");
    }

    @Test
    void concurrentWritersShareFsyncs() throws Exception {
        open();
        int writers = 32;
        int each = 20;
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                int id = w;
                done.add(pool.submit(() -> {
                    for (int i = 0; i < each; i++) {
                        write(new ChunkId(1, id), i * 512L, bytes(512, id * 1000L + i));
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        double writes = metrics.logAppends.count();
        double fsyncs = metrics.logFsyncs.count();
        System.out.printf("group commit: %.0f writes, %.0f fsyncs, %.2f writes per fsync%n", writes, fsyncs, metrics.writesPerFsync());
        assertEquals(writers * each, writes);
        assertTrue(fsyncs < writes, "fsyncs " + fsyncs + " should be fewer than writes " + writes);
        for (int w = 0; w < writers; w++) {
            assertArrayEquals(bytes(512, w * 1000L + each - 1), read(new ChunkId(1, w), (each - 1) * 512L, 512));
        }
    }

    static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path p : (Iterable<Path>) files::iterator) {
                Path t = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(t);
                } else {
                    Files.copy(p, t, StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
    }

    static void replaceTree(Path from, Path to) throws IOException {
        try (Stream<Path> files = Files.walk(to)) {
            for (Path p : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) {
                Files.delete(p);
            }
        }
        copyTree(from, to);
    }
}
