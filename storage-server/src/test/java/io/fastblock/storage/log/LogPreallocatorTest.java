package io.fastblock.storage.log;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.StorageMetrics;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Zeros written ahead of the active segment's records ({@link LogPreallocator}): they appear after
 * small commits, never cover a record, read as the clean end of the log after a crash (a torn
 * record before them is still cut), leave a sealed segment's file ending at its records, and are
 * cut off by a clean close.
 */
class LogPreallocatorTest {
    private static final ChunkId CHUNK = new ChunkId(9, 1);
    private static final int BLOCK = 4096;

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

    private void open(long segmentSize) throws IOException {
        store = LogStore.open(dir, segmentSize, metrics);
    }

    private void shut() throws IOException {
        store.close();
        store = null;
    }

    private static byte[] block(long seed) {
        return LogFixture.bytes(BLOCK, seed);
    }

    private void write(long offset, byte[] data) throws Exception {
        LogFixture.write(store, CHUNK, offset, data);
    }

    private byte[] read(long offset, int length) throws IOException {
        return LogFixture.read(store, CHUNK, offset, length);
    }

    private Path segment(long number) {
        return LogSegment.pathOf(dir.resolve("log"), number);
    }

    /** Waits until the active segment's file reaches past its records (the preallocator ran). */
    private void awaitZerosAhead() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        LogPosition end = store.appendPosition();
        while (Files.size(segment(end.segment())) <= end.position()) {
            assertTrue(System.nanoTime() < deadline, "no zeros were written ahead of the records");
            // One more small commit (to a chunk of its own) asks again.
            store.append(new ChunkId(99, 0), 0, 1, Unpooled.wrappedBuffer(block(-1))).get(10, TimeUnit.SECONDS);
            end = store.appendPosition();
            Thread.sleep(10);
        }
    }

    private static boolean allZero(Path file, long from, long to) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "r")) {
            byte[] b = new byte[(int) (to - from)];
            f.seek(from);
            f.readFully(b);
            for (byte x : b) {
                if (x != 0) {
                    return false;
                }
            }
            return true;
        }
    }

    /** What a kill -9 leaves, set aside: the active segment with its zeros (the index went back to before them). */
    private record Crash(Path indexBefore, LogPosition end, Path segment, long fileBytes) {
    }

    /**
     * Writes block 0, keeps the index as it was then, writes blocks 1..{@code blocks}, waits for
     * zeros ahead of them and copies the segment aside (the store is still open).
     */
    private Crash crashAfterZerosAhead(int blocks) throws Exception {
        open(64 << 20);
        write(0, block(0));
        shut();
        Path indexBefore = dir.resolve("index-before");
        LogStoreTest.copyTree(dir.resolve("index"), indexBefore);
        open(64 << 20);
        for (int i = 1; i <= blocks; i++) {
            write((long) i * BLOCK, block(i));
        }
        awaitZerosAhead();
        LogPosition end = store.appendPosition();
        Path crashed = dir.resolve("crashed.seg");
        Files.copy(segment(end.segment()), crashed, StandardCopyOption.REPLACE_EXISTING);
        long file = Files.size(crashed);
        assertTrue(file > end.position(), "the file reaches past the records");
        // Counted as each piece is forced, just after the file grew.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (store.zerosAheadBytes() < file - end.position() && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertTrue(store.zerosAheadBytes() >= file - end.position(), "counted: " + store.zerosAheadBytes());
        assertTrue(metrics.registry().get("fastblock.log.zeros.ahead.bytes").gauge().value() >= file - end.position());
        return new Crash(indexBefore, end, crashed, file);
    }

    /** Puts the crashed segment and the old index back in place (the store is closed). */
    private void restore(Crash c) throws IOException {
        LogStoreTest.replaceTree(c.indexBefore(), dir.resolve("index"));
        Files.copy(c.segment(), segment(c.end().segment()), StandardCopyOption.REPLACE_EXISTING);
    }

    @Test
    void zerosAheadOfTheRecordsAreTheCleanEndOfTheLogAfterACrash() throws Exception {
        Crash c = crashAfterZerosAhead(20);
        LogPosition end = c.end();
        assertTrue(allZero(c.segment(), end.position(), c.fileBytes()), "only zeros past the records");
        // Every record is a 4 KiB block with its header; the first one is in the index snapshot.
        int writtenSince = (int) (end.position() / (LogRecord.HEADER + BLOCK)) - 1;
        assertEquals(0, end.position() % (LogRecord.HEADER + BLOCK));
        shut();
        assertEquals(end.position(), Files.size(segment(end.segment())), "a clean close cuts the zeros off");
        restore(c);

        open(64 << 20);
        assertEquals(writtenSince, store.recovery().replayedRecords());
        assertEquals(0, store.recovery().truncatedBytes(), "zeros are no torn record");
        assertEquals(end, store.appendPosition());
        for (int i = 0; i <= 20; i++) {
            assertArrayEquals(block(i), read((long) i * BLOCK, BLOCK), "block " + i);
        }
        write(21L * BLOCK, block(21));
        shut();
        open(64 << 20);
        assertArrayEquals(block(21), read(21L * BLOCK, BLOCK));
        assertEquals(0, store.recovery().truncatedBytes());
    }

    @Test
    void aTornRecordBeforeTheZerosIsStillCut() throws Exception {
        Crash c = crashAfterZerosAhead(5);
        LogPosition end = c.end();
        shut();
        // Tear the last record: a byte of its data never reached the disk.
        try (RandomAccessFile f = new RandomAccessFile(c.segment().toFile(), "rw")) {
            f.seek(end.position() - 100);
            int b = f.read();
            f.seek(end.position() - 100);
            f.write(b ^ 0x5a);
        }
        restore(c);

        open(64 << 20);
        long lastRecord = LogRecord.HEADER + BLOCK;
        assertEquals(c.fileBytes() - (end.position() - lastRecord), store.recovery().truncatedBytes(),
                "the torn record and everything after it is cut");
        assertEquals(end.position() - lastRecord, store.appendPosition().position());
        assertEquals(end.position() - lastRecord, Files.size(segment(end.segment())));
    }

    @Test
    void aSealedSegmentEndsAtItsRecordsAndReplaysWhole() throws Exception {
        long segmentSize = 3 << 20;
        open(segmentSize);
        int n = 0;
        while (store.appendPosition().segment() < 3) {
            write((long) (n % 4096) * BLOCK, block(n));
            n++;
        }
        awaitZerosAhead();
        for (long s = 1; s <= 2; s++) {
            long size = Files.size(segment(s));
            assertTrue(size <= segmentSize, "segment " + s + " is " + size + " bytes");
            assertFalse(allZero(segment(s), size - 8, size), "segment " + s + " ends in a record, not in zeros");
        }
        // Replay every record from the start (no index): nothing is cut, the later segments stay.
        shut();
        try (var files = Files.walk(dir.resolve("index"))) {
            for (Path p : (Iterable<Path>) files.sorted(java.util.Comparator.reverseOrder())::iterator) {
                Files.delete(p);
            }
        }
        open(segmentSize);
        assertEquals(0, store.recovery().truncatedBytes());
        assertEquals(3, store.appendPosition().segment());
        for (int i = Math.max(0, n - 4096); i < n; i++) {
            assertArrayEquals(block(i), read((long) (i % 4096) * BLOCK, BLOCK), "write " + i);
        }
    }

    @Test
    void recordsOfEverySizeFromConcurrentWritersAreNeverCoveredByZeros() throws Exception {
        open(32 << 20);
        Random r = new Random(5);
        int chunks = 6;
        int slots = 64;
        int slotBytes = 320 << 10;
        byte[][][] last = new byte[chunks][slots][];
        for (int round = 0; round < 12; round++) {
            List<CompletableFuture<Void>> inFlight = new ArrayList<>();
            // Each slot written once per round, so the last write of a slot is the one that lands.
            for (int c = 0; c < chunks; c++) {
                for (int s = 0; s < slots; s++) {
                    if (r.nextInt(3) != 0) {
                        continue;
                    }
                    int size = r.nextInt(4) == 0 ? (1 + r.nextInt(slotBytes / 512)) * 512 : 512 * (1 + r.nextInt(16));
                    byte[] d = new byte[size];
                    r.nextBytes(d);
                    byte[] whole = last[c][s] == null ? new byte[slotBytes] : last[c][s].clone();
                    System.arraycopy(d, 0, whole, 0, size);
                    last[c][s] = whole;
                    inFlight.add(store.append(new ChunkId(9, c), (long) s * slotBytes, round, Unpooled.wrappedBuffer(d)));
                }
            }
            CompletableFuture.allOf(inFlight.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        }
        for (int pass = 0; pass < 2; pass++) {
            for (int c = 0; c < chunks; c++) {
                for (int s = 0; s < slots; s++) {
                    if (last[c][s] == null) {
                        continue;
                    }
                    ByteBuf b = store.read(new ChunkId(9, c), (long) s * slotBytes, slotBytes, PooledByteBufAllocator.DEFAULT);
                    try {
                        byte[] got = new byte[slotBytes];
                        b.getBytes(0, got);
                        assertArrayEquals(last[c][s], got, "chunk " + c + " slot " + s + (pass == 0 ? "" : " after a restart"));
                    } finally {
                        b.release();
                    }
                }
            }
            shut();
            open(32 << 20);
            assertEquals(0, store.recovery().truncatedBytes());
        }
    }
}
