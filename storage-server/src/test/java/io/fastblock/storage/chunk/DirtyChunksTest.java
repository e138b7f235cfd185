package io.fastblock.storage.chunk;

import static io.fastblock.storage.chunk.ChunkChecksumTest.read;
import static io.fastblock.storage.chunk.ChunkChecksumTest.write;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.io.FaultInjectingFileIo;
import io.fastblock.storage.io.FileIoFactory;
import io.netty.buffer.Unpooled;
import java.io.RandomAccessFile;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DirtyChunksTest {
    private static final Duration NEVER = Duration.ofHours(1);
    @TempDir
    Path dir;

    @Test
    void recordSurvivesATornSaveByFallingBackToTheOtherSlot() throws Exception {
        ChunkId a = new ChunkId(1, 1);
        try (DirtyChunks d = DirtyChunks.open(dir, FileIoFactory.real())) {
            assertEquals(new DirtyChunks.State(true, List.of()), d.lastState(), "a new directory reads as clean");
            d.save(false, List.of(new DirtyChunks.Entry(a, 3, 77)));
            d.save(false, List.of(new DirtyChunks.Entry(a, 3, 78, 5 << 20), new DirtyChunks.Entry(new ChunkId(1, 2), 3, 0)));
        }
        try (DirtyChunks d = DirtyChunks.open(dir, FileIoFactory.real())) {
            DirtyChunks.State s = d.lastState();
            assertFalse(s.clean());
            assertEquals(2, s.dirty().size());
            assertEquals(new DirtyChunks.Entry(a, 3, 78, 5 << 20), s.dirty().get(0));
        }
        // Tear the newest slot (dirty.1 was written last): the older record is what remains.
        try (RandomAccessFile f = new RandomAccessFile(dir.resolve("dirty.1").toFile(), "rw")) {
            f.seek(20);
            f.write(0xEE);
        }
        try (DirtyChunks d = DirtyChunks.open(dir, FileIoFactory.real())) {
            assertEquals(List.of(new DirtyChunks.Entry(a, 3, 77)), d.lastState().dirty());
            // And the next save goes to the torn slot's place, keeping the good one.
            d.save(true, List.of());
        }
        try (DirtyChunks d = DirtyChunks.open(dir, FileIoFactory.real())) {
            assertTrue(d.lastState().clean());
        }
    }

    @Test
    void cleanShutdownLeavesNothingToResync() throws Exception {
        ChunkId c = new ChunkId(2, 0);
        try (ChunkStore store = new ChunkStore(dir, 2, FileIoFactory.real(), NEVER)) {
            write(store, c, 0, new byte[]{1, 2, 3});
            assertEquals(1, store.dirtyCount());
        }
        try (ChunkStore store = new ChunkStore(dir, 2, FileIoFactory.real(), NEVER)) {
            assertEquals(List.of(), store.pendingResync());
            assertArrayEquals(new byte[]{1, 2, 3}, read(store, c, 0, 3));
        }
    }

    @Test
    void flushClearsChunksNotWrittenSinceAndRemembersTheirSequence() throws Exception {
        FaultInjectingFileIo.Factory disk = new FaultInjectingFileIo.Factory(1);
        ChunkId a = new ChunkId(3, 0);
        ChunkId b = new ChunkId(3, 1);
        ChunkStore store = new ChunkStore(dir, 2, disk, NEVER);
        store.writeAsync(7, 100, a, 0, Unpooled.wrappedBuffer(new byte[]{1})).get(10, TimeUnit.SECONDS);
        store.flush();
        assertEquals(1, store.dirtyCount(), "written during the interval: forced but still recorded");
        store.flush();
        assertEquals(0, store.dirtyCount(), "idle for a whole interval: clean");
        store.writeAsync(7, 105, a, 1, Unpooled.wrappedBuffer(new byte[]{2})).get(10, TimeUnit.SECONDS);
        store.writeAsync(8, 9, b, 0, Unpooled.wrappedBuffer(new byte[]{3})).get(10, TimeUnit.SECONDS);
        disk.powerLoss(FaultInjectingFileIo.Tear.NONE);
        store.close();
        disk.powerOn();
        try (ChunkStore again = new ChunkStore(dir, 2, disk, NEVER)) {
            List<DirtyChunks.Entry> pending = again.pendingResync();
            assertEquals(2, pending.size(), pending.toString());
            assertTrue(pending.contains(new DirtyChunks.Entry(a, 7, 100, ChunkStore.END_STEP)), "a was forced up to sequence 100: " + pending);
            assertTrue(pending.contains(new DirtyChunks.Entry(b, 8, 0, ChunkStore.END_STEP)), "b was never forced: " + pending);
            // Client reads are held off; the raw read the log's base files use is not.
            java.util.concurrent.ExecutionException held = assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> again.readAsync(a, 0, 1, io.netty.buffer.PooledByteBufAllocator.DEFAULT).get(10, TimeUnit.SECONDS));
            assertTrue(held.getCause().getCause() instanceof ChunkResyncingException, held.toString());
            assertArrayEquals(new byte[]{1}, read(again, a, 0, 1));
            // Power loss dropped the unforced byte of a; the forced one is there and its checksum was rebuilt.
            again.finishResync(a).get(10, TimeUnit.SECONDS);
            assertArrayEquals(new byte[]{1, 0}, read(again, a, 0, 2));
            assertEquals(List.of(), again.verifyAsync(a, 0, 1).get(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void processCrashInTheSameBootRebuildsChecksumsWithoutResync() throws Exception {
        FaultInjectingFileIo.Factory disk = new FaultInjectingFileIo.Factory(4);
        ChunkId c = new ChunkId(6, 0);
        byte[] d = new byte[20_000];
        new Random(9).nextBytes(d);
        ChunkStore store = new ChunkStore(dir, 2, disk, NEVER);
        store.writeAsync(1, 1, c, 0, Unpooled.wrappedBuffer(d)).get(10, TimeUnit.SECONDS);
        // Kill -9 right after the data reached the file but before its checksum update did.
        try (RandomAccessFile crc = new RandomAccessFile(store.fileOf(c).resolveSibling("0.crc").toFile(), "rw")) {
            crc.setLength(0);
        }
        disk.processCrash();
        store.close();
        disk.powerOn();
        try (ChunkStore again = new ChunkStore(dir, 2, disk, NEVER)) {
            assertEquals(List.of(), again.pendingResync(), "the page cache kept the data: nothing to fetch");
            assertEquals(1, again.dirtyCount(), "still dirty until the next checkpoint forces it");
            assertArrayEquals(d, read(again, c, 0, d.length));
            assertEquals(List.of(), again.verifyAsync(c, 0, 5).get(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void tornSidecarAfterPowerLossIsRebuiltNotReportedAsCorruption() throws Exception {
        FaultInjectingFileIo.Factory disk = new FaultInjectingFileIo.Factory(2);
        ChunkId c = new ChunkId(4, 0);
        byte[] d = new byte[64 * 1024];
        new Random(1).nextBytes(d);
        ChunkStore store = new ChunkStore(dir, 2, disk, NEVER);
        store.writeAsync(1, 1, c, 0, Unpooled.wrappedBuffer(d)).get(10, TimeUnit.SECONDS);
        store.flush();
        byte[] e = new byte[10_000];
        new Random(2).nextBytes(e);
        store.writeAsync(1, 2, c, 3000, Unpooled.wrappedBuffer(e)).get(10, TimeUnit.SECONDS);
        // The last write is the sidecar's: tearing it leaves data and checksums disagreeing.
        disk.powerLoss(FaultInjectingFileIo.Tear.LAST_WRITE);
        store.close();
        disk.powerOn();
        try (ChunkStore again = new ChunkStore(dir, 2, disk, NEVER)) {
            assertEquals(1, again.pendingResync().size());
            again.resyncWriteAsync(c, 3000, Unpooled.wrappedBuffer(e)).get(10, TimeUnit.SECONDS);
            again.finishResync(c).get(10, TimeUnit.SECONDS);
            System.arraycopy(e, 0, d, 3000, e.length);
            assertArrayEquals(d, read(again, c, 0, d.length));
            assertEquals(List.of(), again.verifyAsync(c, 0, 16).get(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void writesDuringResyncAreNotOverwrittenByOlderFetchedData() throws Exception {
        FaultInjectingFileIo.Factory disk = new FaultInjectingFileIo.Factory(3);
        ChunkId c = new ChunkId(5, 0);
        ChunkStore store = new ChunkStore(dir, 2, disk, NEVER);
        store.writeAsync(1, 1, c, 0, Unpooled.wrappedBuffer(new byte[100])).get(10, TimeUnit.SECONDS);
        disk.powerLoss(FaultInjectingFileIo.Tear.NONE);
        store.close();
        disk.powerOn();
        try (ChunkStore again = new ChunkStore(dir, 2, disk, NEVER)) {
            again.writeAsync(1, 5, c, 10, Unpooled.wrappedBuffer(new byte[]{9, 9})).get(10, TimeUnit.SECONDS);
            byte[] fetched = new byte[20];
            java.util.Arrays.fill(fetched, (byte) 4);
            again.resyncWriteAsync(c, 0, Unpooled.wrappedBuffer(fetched)).get(10, TimeUnit.SECONDS);
            again.finishResync(c).get(10, TimeUnit.SECONDS);
            byte[] want = fetched.clone();
            want[10] = 9;
            want[11] = 9;
            assertArrayEquals(want, read(again, c, 0, 20));
        }
    }
}
