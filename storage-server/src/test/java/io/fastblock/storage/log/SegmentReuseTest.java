package io.fastblock.storage.log;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.StorageMetrics;
import io.fastblock.storage.io.FaultInjectingFileIo;
import io.fastblock.storage.io.FileIoFactory;
import io.fastblock.storage.io.SettableSpace;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Retired segments' files reused for new segments ({@link SegmentSet}), and the records bound to
 * their segment ({@link LogRecord}) that make it safe: a reused file's earlier records, whole and
 * well-formed, are never replayed as records of its new segment; files of an earlier version's
 * unbound records are read but never reused; the kept files are capped and given up when the disk
 * is short.
 */
class SegmentReuseTest {
    private static final ChunkId CHUNK = new ChunkId(12, 3);
    private static final int BLOCK = 4096;
    private static final int RECORD = LogRecord.HEADER + BLOCK;
    /** Fifteen 4 KiB records fill a segment; the sixteenth rolls the log on. */
    private static final long SEGMENT = 64 << 10;
    private static final int PER_SEGMENT = (int) (SEGMENT / RECORD);
    /** No pacing, small batches (as LogCleanerTest). */
    private static final LogCleaner.Settings EAGER = new LogCleaner.Settings(0.85, 0.95, 0, 1.0, 16 * 1024, 5);

    @TempDir
    Path dir;
    private final StorageMetrics metrics = new StorageMetrics();
    /** Whether retired files are kept depends on free space: the tests decide it, not the machine. */
    private final SettableSpace space = SettableSpace.roomy();
    private LogStore store;

    @AfterEach
    void close() throws IOException {
        if (store != null) {
            store.close();
        }
    }

    private void open(FileIoFactory files) throws IOException {
        store = LogStore.open(dir, SEGMENT, metrics, BaseFiles.NONE, 0, space.under(files));
    }

    private void shut() throws IOException {
        store.close();
        store = null;
    }

    private Path log() {
        return dir.resolve("log");
    }

    private Path segment(long number) {
        return LogSegment.pathOf(log(), number);
    }

    private Path free(long number) {
        return log().resolve(String.format("%012d.free", number));
    }

    private static Object inode(Path p) throws IOException {
        Object key = Files.readAttributes(p, BasicFileAttributes.class).fileKey();
        assertNotNull(key, "this filesystem names no file keys");
        return key;
    }

    private static byte[] block(int version, int slot) {
        return LogFixture.bytes(BLOCK, version * 1000L + slot);
    }

    /** One record per slot, slots 0..n-1, of {@code version}. */
    private void writeVersion(int version, int n) throws Exception {
        for (int slot = 0; slot < n; slot++) {
            LogFixture.write(store, CHUNK, (long) slot * BLOCK, block(version, slot));
        }
    }

    private int cleanUntilDone() throws Exception {
        return LogFixture.cleanUntilDone(new LogCleaner(store, EAGER));
    }

    private long freeFilesOnDisk() throws IOException {
        try (Stream<Path> s = Files.list(log())) {
            return s.filter(p -> p.getFileName().toString().endsWith(".free")).count();
        }
    }

    /**
     * Segments 1 and 2 hold versions 1 and 2 of every slot, segment 3 version 3 (all three full);
     * cleaning retires 1 and 2 and keeps both files.
     */
    private void threeFullSegmentsAndTwoKeptFiles(FileIoFactory files) throws Exception {
        open(files);
        for (int v = 1; v <= 3; v++) {
            writeVersion(v, PER_SEGMENT);
        }
        assertEquals(new LogPosition(3, (long) PER_SEGMENT * RECORD), store.appendPosition());
        assertEquals(2, cleanUntilDone());
        assertTrue(Files.exists(free(1)) && Files.exists(free(2)), "both retired files are kept");
        assertFalse(Files.exists(segment(1)) || Files.exists(segment(2)));
        assertEquals(2, store.freeSegmentFiles());
    }

    @ParameterizedTest(name = "direct writes: {0}")
    @ValueSource(booleans = {false, true})
    void aReusedFilesEarlierRecordsAreNeverReplayed(boolean direct) throws Exception {
        // Through the page cache the new records do not pad their last block with zeros, so the
        // record after them is the old file's, whole: only its binding to segment 1 stops replay.
        FileIoFactory files = direct ? FileIoFactory.real() : FileIoFactory.withoutDirectWrites(FileIoFactory.real());
        threeFullSegmentsAndTwoKeptFiles(files);
        Object file1 = inode(free(1));
        long oldBytes = Files.size(free(1));
        assertEquals((long) PER_SEGMENT * RECORD, oldBytes, "a sealed segment ends at its records");
        shut();
        Path indexBefore = dir.resolve("index-before");
        LogStoreTest.copyTree(dir.resolve("index"), indexBefore);

        open(files);
        writeVersion(4, 3);
        assertEquals(new LogPosition(4, 3L * RECORD), store.appendPosition());
        assertEquals(file1, inode(segment(4)), "segment 4 is written into segment 1's old file");
        assertFalse(Files.exists(free(1)));
        assertEquals(1, store.reusedSegmentFiles());
        assertEquals(1.0, metrics.registry().get("fastblock.log.segments.reused").gauge().value());
        assertEquals(oldBytes, Files.size(segment(4)), "no new blocks while the old ones last");
        // What a kill -9 leaves: the file with the old records after the new ones, and (here) an
        // index from before the new ones, so replay walks the new records into the old.
        Path crashed = dir.resolve("crashed.seg");
        Files.copy(segment(4), crashed);
        shut();
        assertEquals(3L * RECORD, Files.size(segment(4)), "a clean close cuts the file back to its records");
        LogStoreTest.replaceTree(indexBefore, dir.resolve("index"));
        Files.copy(crashed, segment(4), StandardCopyOption.REPLACE_EXISTING);

        open(files);
        assertEquals(3, store.recovery().replayedRecords(), "the three new records, none of segment 1's");
        assertEquals(oldBytes - 3L * RECORD, store.recovery().truncatedBytes());
        assertEquals(new LogPosition(4, 3L * RECORD), store.appendPosition());
        for (int slot = 0; slot < PER_SEGMENT; slot++) {
            assertArrayEquals(block(slot < 3 ? 4 : 3, slot), LogFixture.read(store, CHUNK, (long) slot * BLOCK, BLOCK),
                    "slot " + slot);
        }
        // And the log goes on from there: the rest of segment 4, then segment 5 on the other kept file.
        Object file2 = inode(free(2));
        writeVersion(5, PER_SEGMENT);
        assertEquals(5, store.appendPosition().segment());
        assertEquals(file2, inode(segment(5)));
        shut();
        open(files);
        assertEquals(0, store.recovery().truncatedBytes());
        for (int slot = 0; slot < PER_SEGMENT; slot++) {
            assertArrayEquals(block(5, slot), LogFixture.read(store, CHUNK, (long) slot * BLOCK, BLOCK), "slot " + slot);
        }
    }

    /**
     * A power loss beats the fsync of a batch written into a reused file: the batch's blocks go
     * back to the old segment's forced records (a torn prefix of the batch may survive). Replay
     * keeps every acknowledged record and takes no old one.
     */
    @ParameterizedTest(name = "direct writes: {0}")
    @ValueSource(booleans = {false, true})
    void aPowerLossOnAReusedFileKeepsTheAcknowledgedRecordsAndNoOldOnes(boolean direct) throws Exception {
        FaultInjectingFileIo.Factory disk = new FaultInjectingFileIo.Factory(direct ? 31 : 32);
        FileIoFactory files = direct ? disk : FileIoFactory.withoutDirectWrites(disk);
        threeFullSegmentsAndTwoKeptFiles(files);
        writeVersion(4, 3);
        assertEquals(4, store.appendPosition().segment());
        assertEquals(1, store.reusedSegmentFiles());
        disk.powerLossAtNextForceOf(".seg", FaultInjectingFileIo.Tear.LAST_WRITE);
        CompletableFuture<Void> lost = store.append(CHUNK, 3L * BLOCK, 1, Unpooled.wrappedBuffer(block(4, 3)));
        assertTrue(lost.handle((v, e) -> e != null).get(30, TimeUnit.SECONDS), "the append the power loss beat must fail");
        assertNotNull(disk.armedPowerLossResult(), "the power loss struck");
        try {
            store.close();
        } catch (Exception e) {
            // the disk is gone
        }
        store = null;
        disk.powerOn();

        open(files);
        // The lost record may still be whole on disk: around the page cache its write reached on
        // into padding, and the torn prefix that survived can cover it. Then replay takes it (it was
        // never acknowledged, so either outcome is right). Nothing after it: the old records are
        // whole too, but bound to segment 1.
        LogPosition end = store.appendPosition();
        boolean lostRecordSurvived = end.equals(new LogPosition(4, 4L * RECORD));
        assertTrue(lostRecordSurvived || end.equals(new LogPosition(4, 3L * RECORD)), "the log ends at " + end);
        for (int slot = 0; slot < PER_SEGMENT; slot++) {
            int version = slot < 3 || (slot == 3 && lostRecordSurvived) ? 4 : 3;
            assertArrayEquals(block(version, slot), LogFixture.read(store, CHUNK, (long) slot * BLOCK, BLOCK), "slot " + slot);
        }
    }

    @Test
    void aBoundRecordChecksOnlyInItsOwnSegment() {
        ByteBuffer[] data = {ByteBuffer.wrap(block(1, 1))};
        ByteBuffer bound = record(LogRecord.header(7, CHUNK, 0, 1, data), data);
        LogRecord.Header h = LogRecord.parse(bound.duplicate());
        assertNotNull(h);
        assertTrue(h.bound());
        assertTrue(LogRecord.verify(bound.duplicate(), h, 7));
        assertFalse(LogRecord.verify(bound.duplicate(), h, 8));
        assertFalse(LogRecord.verify(bound.duplicate(), h, 7L << 32), "all eight bytes of the number count");

        ByteBuffer unbound = record(LogRecord.unboundHeader(CHUNK, 0, 1, -1, -1, data), data);
        LogRecord.Header u = LogRecord.parse(unbound.duplicate());
        assertFalse(u.bound());
        assertTrue(LogRecord.verify(unbound.duplicate(), u, 7) && LogRecord.verify(unbound.duplicate(), u, 8));

        ByteBuffer moved = record(LogRecord.header(7, CHUNK, 0, 1, 3, 4096, data), data);
        LogRecord.Header m = LogRecord.parse(moved.duplicate());
        assertTrue(m.bound() && m.moved());
        assertEquals(3, m.originSegment());
        assertEquals(4096, m.originPosition());
        ByteBuffer trim = LogRecord.trimHeader(7, CHUNK, 0, 1, 8192);
        LogRecord.Header t = LogRecord.parse(trim.duplicate());
        assertTrue(t.bound() && t.trim());
        assertEquals(8192, t.length());
        assertTrue(LogRecord.verify(trim.duplicate(), t, 7));
        assertFalse(LogRecord.verify(trim.duplicate(), t, 6));
    }

    private static ByteBuffer record(ByteBuffer header, ByteBuffer[] data) {
        ByteBuffer r = ByteBuffer.allocate(header.remaining() + data[0].remaining());
        r.put(header.duplicate()).put(data[0].duplicate()).flip();
        return r;
    }

    @Test
    void aStoreKeepsRetiredFilesOnlyWhileItsDiskHasRoom() throws Exception {
        // 9% free: short of space as the cleaner sees it by default (10%), so nothing is kept.
        space.usable(space.total() / 100 * 9);
        open(FileIoFactory.real());
        for (int v = 1; v <= 3; v++) {
            writeVersion(v, PER_SEGMENT);
        }
        assertEquals(2, cleanUntilDone());
        assertFalse(Files.exists(segment(1)) || Files.exists(segment(2)));
        assertEquals(0, freeFilesOnDisk(), "a disk short of space keeps no retired file");
        assertEquals(0, store.freeSegmentFiles());

        // Room again, but a reserve that leaves only three segments' worth above it: still nothing kept.
        space.usable(space.total() / 2);
        store.reservedSpace(space.usable() - 3 * SEGMENT);
        writeVersion(4, PER_SEGMENT);
        assertEquals(1, cleanUntilDone());
        assertEquals(0, freeFilesOnDisk(), "keeping the file would bring the reserve within a few segments");

        // Room and no reserve: the next retired file is kept, and reused.
        store.reservedSpace(0);
        writeVersion(5, PER_SEGMENT);
        assertEquals(1, cleanUntilDone());
        assertEquals(1, freeFilesOnDisk());
        assertEquals(1, store.freeSegmentFiles());
        long reused = store.reusedSegmentFiles();
        writeVersion(6, PER_SEGMENT);
        assertEquals(reused + 1, store.reusedSegmentFiles());
        for (int slot = 0; slot < PER_SEGMENT; slot++) {
            assertArrayEquals(block(6, slot), LogFixture.read(store, CHUNK, (long) slot * BLOCK, BLOCK), "slot " + slot);
        }
    }

    @Test
    void anEarlierVersionsUnboundSegmentIsReadButNeverReused() throws Exception {
        // Segment 1 as a log written before binding: unbound records, no index.
        Files.createDirectories(log());
        LogSegment old = LogSegment.open(log(), 1);
        for (int slot = 0; slot < PER_SEGMENT; slot++) {
            ByteBuffer[] data = {ByteBuffer.wrap(block(1, slot))};
            old.append(new ByteBuffer[]{LogRecord.unboundHeader(CHUNK, (long) slot * BLOCK, 1, -1, -1, data), data[0]});
        }
        old.force();
        old.close();
        open(FileIoFactory.real());
        assertEquals(PER_SEGMENT, store.recovery().replayedRecords());
        for (int slot = 0; slot < PER_SEGMENT; slot++) {
            assertArrayEquals(block(1, slot), LogFixture.read(store, CHUNK, (long) slot * BLOCK, BLOCK), "slot " + slot);
        }
        writeVersion(2, PER_SEGMENT);
        writeVersion(3, PER_SEGMENT);
        assertEquals(2, cleanUntilDone());
        assertFalse(Files.exists(segment(1)) || Files.exists(free(1)), "segment 1's file is deleted");
        assertTrue(Files.exists(free(2)), "segment 2 (bound records) is kept");
        shut();
        open(FileIoFactory.real());
        for (int slot = 0; slot < PER_SEGMENT; slot++) {
            assertArrayEquals(block(3, slot), LogFixture.read(store, CHUNK, (long) slot * BLOCK, BLOCK), "slot " + slot);
        }
    }

    @Test
    void retireForReuseRefusesASegmentWithUnboundRecords() throws Exception {
        Files.createDirectories(log());
        LogSegment old = LogSegment.open(log(), 1);
        ByteBuffer[] data = {ByteBuffer.wrap(block(1, 0))};
        old.append(new ByteBuffer[]{LogRecord.unboundHeader(CHUNK, 0, 1, -1, -1, data), data[0]});
        old.force();
        old.close();
        LogSegment reopened = LogSegment.open(log(), 1);
        assertFalse(reopened.reusable());
        assertThrows(IllegalStateException.class, () -> reopened.retireForReuse(free(1), () -> { }));
        reopened.close();
        LogSegment empty = LogSegment.open(log(), 2);
        assertTrue(empty.reusable(), "a new segment will hold bound records only");
        empty.close();
    }

    /** Appends one record to the active segment (rolling on if it is full) and forces it. */
    private static void appendOne(SegmentSet set, int slot) throws IOException {
        ByteBuffer[] data = {ByteBuffer.wrap(block(1, slot))};
        LogSegment seg = set.forAppend(RECORD);
        seg.append(new ByteBuffer[]{LogRecord.header(seg.number(), CHUNK, (long) slot * BLOCK, 1, data), data[0]});
        seg.force();
    }

    @Test
    void keptFilesAreCappedAndDeletedWhenTheDiskIsShort() throws Exception {
        boolean[] room = {true};
        SegmentSet set = new SegmentSet(log(), RECORD, FileIoFactory.real(), () -> room[0]);
        for (int i = 0; i < 6; i++) {
            appendOne(set, i); // one record per segment: segments 1..6
        }
        assertEquals(6, set.active().number());
        for (long n = 1; n <= 3; n++) {
            set.retire(n);
        }
        assertEquals(SegmentSet.KEEP_FREE, set.freeFiles());
        assertTrue(Files.exists(free(1)) && Files.exists(free(2)));
        assertFalse(Files.exists(free(3)) || Files.exists(segment(3)), "beyond the cap a file is deleted");
        appendOne(set, 6); // segment 7 on file 1
        assertEquals(1, set.freeFiles());
        room[0] = false;
        set.retire(4);
        assertFalse(Files.exists(free(4)) || Files.exists(segment(4)), "no room: deleted, though below the cap");
        assertEquals(1, set.freeFiles());
        set.close();

        // A restart takes the kept files back, up to the cap.
        Files.copy(free(2), free(3));
        Files.copy(free(2), free(4));
        SegmentSet again = new SegmentSet(log(), RECORD, FileIoFactory.real(), () -> true);
        assertEquals(SegmentSet.KEEP_FREE, again.freeFiles());
        assertEquals(SegmentSet.KEEP_FREE, freeFilesOnDisk());
        appendOne(again, 7);
        assertEquals(8, again.active().number());
        assertEquals(1, again.reusedFiles());
        again.close();
    }

    @Test
    void aFileIsRenamedForReuseOnlyAfterItsLastReaderLetsGo() throws Exception {
        SegmentSet set = new SegmentSet(log(), RECORD, FileIoFactory.real(), () -> true);
        appendOne(set, 0);
        appendOne(set, 1);
        LogSegment reading = set.acquire(1);
        assertNotNull(reading);
        set.retire(1);
        assertNull(set.get(1));
        assertTrue(Files.exists(segment(1)), "still read");
        assertEquals(0, set.freeFiles());
        ByteBuffer head = ByteBuffer.allocate(LogRecord.HEADER);
        assertTrue(reading.readFully(0, head));
        assertTrue(LogRecord.parse(head.flip()).bound());
        reading.release();
        assertFalse(Files.exists(segment(1)));
        assertTrue(Files.exists(free(1)));
        assertEquals(1, set.freeFiles());
        set.close();
    }
}
