package io.fastblock.storage.chunk;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.storage.io.FileIo;
import io.fastblock.storage.io.FileIoFactory;
import io.fastblock.storage.io.ForwardingFileIo;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sidecar's entries are held in memory while a chunk is written and reach the file when it is
 * forced, released or closed. Real files; the file is decoded independently of {@link BlockSums}.
 */
class BlockSumsTest {
    @TempDir
    Path dir;

    private int[] onDisk(Path file) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file));
        int[] out = new int[b.capacity() / 4];
        for (int i = 0; i < out.length; i++) {
            out[i] = b.getInt(i * 4);
        }
        return out;
    }

    /** Counts reads and writes, and fails the next write when asked. */
    private static final class Counting extends ForwardingFileIo {
        int writes;
        int reads;
        int sizes;
        boolean failNext;

        Counting(FileIo real) {
            super(real);
        }

        @Override
        public int read(ByteBuffer dst, long position) throws IOException {
            reads++;
            return super.read(dst, position);
        }

        @Override
        public long size() throws IOException {
            sizes++;
            return super.size();
        }

        @Override
        public int write(ByteBuffer src, long position) throws IOException {
            if (failNext) {
                failNext = false;
                throw new IOException("injected");
            }
            writes++;
            return super.write(src, position);
        }
    }

    @Test
    void entriesWaitInMemoryUntilForcedAndReadTheSameFromMemoryAndFile() throws Exception {
        Path file = dir.resolve("c.crc");
        Counting io = new Counting(FileIoFactory.real().open(file, true));
        try (BlockSums sums = new BlockSums(io, SumMemory.UNLIMITED)) {
            sums.put(3, new int[] {7, 8, 9}, null);
            sums.put(40, new int[] {11}, null);
            assertEquals(0, io.writes, "no file write per checksum update");
            assertEquals(0, Files.size(file));
            assertArrayEquals(new int[] {0, 7, 8, 9, 0}, sums.get(2, 5));
            assertArrayEquals(new int[] {11, 0}, sums.get(40, 2), "past the last entry: 0");
            assertEquals(41, sums.entries());

            sums.force();
            assertEquals(1, io.writes, "one write for the changed range");
            int[] disk = onDisk(file);
            assertEquals(41, disk.length);
            assertArrayEquals(new int[] {7, 8, 9}, Arrays.copyOfRange(disk, 3, 6));
            assertEquals(11, disk[40]);

            sums.release();
            assertFalse(sums.held());
            assertArrayEquals(new int[] {0, 7, 8, 9, 0}, sums.get(2, 5), "read back from the file");
            sums.force();
            assertEquals(1, io.writes, "nothing pending: nothing written");
        }
    }

    @Test
    void skippedEntriesKeepTheirValueAndAReleasedChunkReloadsTheFile() throws Exception {
        Path file = dir.resolve("c.crc");
        try (BlockSums sums = new BlockSums(FileIoFactory.real().open(file, true), SumMemory.UNLIMITED)) {
            sums.put(0, new int[] {1, 2, 3, 4}, null);
            sums.release();
            assertTrue(Files.size(file) == 16, "released: written back");
            sums.put(0, new int[] {10, 20, 30, 40}, new boolean[] {false, true, false, true});
            assertTrue(sums.held());
            assertArrayEquals(new int[] {10, 2, 30, 4}, sums.get(0, 4));
        }
        assertArrayEquals(new int[] {10, 2, 30, 4}, onDisk(file), "close writes pending entries back");
    }

    @Test
    void zeroAndTruncateChangeMemoryAndFileAlike() throws Exception {
        Path file = dir.resolve("c.crc");
        try (BlockSums sums = new BlockSums(FileIoFactory.real().open(file, true), SumMemory.UNLIMITED)) {
            int[] v = new int[20];
            Arrays.setAll(v, i -> i + 100);
            sums.put(0, v, null);
            sums.force();
            sums.zero(5, 8);
            sums.zero(18, 1000); // only what exists
            assertEquals(20, sums.entries());
            sums.truncate(15);
            assertEquals(15, sums.entries());
            assertEquals(15 * 4, Files.size(file), "the file is cut at once");
            sums.put(17, new int[] {5}, null);
            assertArrayEquals(new int[] {0, 0, 5}, sums.get(15, 3), "entries cut off read 0, not their old value");
            sums.force();
        }
        int[] disk = onDisk(file);
        assertEquals(18, disk.length);
        for (int i = 0; i < 15; i++) {
            assertEquals(i >= 5 && i < 8 ? 0 : i + 100, disk[i], "entry " + i);
        }
        assertArrayEquals(new int[] {0, 0, 5}, Arrays.copyOfRange(disk, 15, 18));
    }

    @Test
    void aFailedWriteBackStaysPendingAndTheNextForceWritesIt() throws Exception {
        Path file = dir.resolve("c.crc");
        Counting io = new Counting(FileIoFactory.real().open(file, true));
        try (BlockSums sums = new BlockSums(io, SumMemory.UNLIMITED)) {
            sums.put(2, new int[] {42}, null);
            io.failNext = true;
            assertThrows(IOException.class, sums::force);
            assertThrows(IOException.class, () -> {
                io.failNext = true;
                sums.release();
            });
            assertTrue(sums.held(), "a failed release keeps the entries");
            sums.force();
            assertArrayEquals(new int[] {0, 0, 42}, onDisk(file));
        }
    }

    @Test
    void aChunkOverwriteWritesOnlyItsDataAndTheCheckpointWritesTheSums() throws Exception {
        Counting[] crc = new Counting[1];
        FileIoFactory files = new FileIoFactory() {
            @Override
            public FileIo open(Path file, boolean create) throws IOException {
                FileIo real = FileIoFactory.real().open(file, create);
                if (file.getFileName().toString().endsWith(".crc")) {
                    crc[0] = new Counting(real);
                    return crc[0];
                }
                return real;
            }

            @Override
            public void syncDirectory(Path d) {
            }
        };
        Path data = dir.resolve("c");
        byte[] block = new byte[ChunkFile.BLOCK];
        Random r = new Random(3);
        try (ChunkFile f = ChunkFile.open(new io.fastblock.protocol.ChunkId(1, 1), data, files, true)) {
            for (int i = 0; i < 50; i++) {
                r.nextBytes(block);
                f.write((long) r.nextInt(64) * ChunkFile.BLOCK, new ByteBuffer[] {ByteBuffer.wrap(block.clone())});
            }
            assertEquals(0, crc[0].writes, "50 writes, no sidecar write");
            assertEquals(java.util.List.of(), f.verify(0, 64, files), "reads check against the entries in memory");
            f.force();
            assertEquals(1, crc[0].writes);
            f.releaseSums();
            assertFalse(f.sumsHeld());
            assertEquals(java.util.List.of(), f.verify(0, 64, files), "and against the file once released");
        }
    }

    @Test
    void pastTheMemoryLimitEntriesGoStraightToTheFileAndReleasedChunksGiveTheirRoomBack() throws Exception {
        SumMemory room = new SumMemory(3 * 1024 * 4); // three chunks of 1024 blocks
        BlockSums[] chunks = new BlockSums[4];
        Counting[] io = new Counting[4];
        try {
            for (int c = 0; c < 4; c++) {
                io[c] = new Counting(FileIoFactory.real().open(dir.resolve(c + ".crc"), true));
                chunks[c] = new BlockSums(io[c], room);
                chunks[c].put(1023, new int[] {c + 1}, null);
            }
            for (int c = 0; c < 3; c++) {
                assertTrue(chunks[c].held(), "chunk " + c + " fits");
                assertEquals(0, io[c].writes);
            }
            assertFalse(chunks[3].held(), "no room left for the fourth");
            assertEquals(1, io[3].writes, "written through");
            assertArrayEquals(new int[] {4}, chunks[3].get(1023, 1));
            assertEquals(room.limit(), room.held());

            chunks[1].put(2047, new int[] {9}, null); // would grow past the limit: written back, let go, written through
            assertFalse(chunks[1].held());
            assertArrayEquals(new int[] {0, 2, 0}, chunks[1].get(1022, 3));
            assertArrayEquals(new int[] {9}, chunks[1].get(2047, 1));
            assertEquals(2 * 1024 * 4, room.held());

            chunks[3].put(5, new int[] {6}, null);
            assertTrue(chunks[3].held(), "the room chunk 1 gave back");
            assertArrayEquals(new int[] {6, 0}, chunks[3].get(5, 2));
            assertArrayEquals(new int[] {4}, chunks[3].get(1023, 1), "loaded from what was written through");
        } finally {
            for (BlockSums b : chunks) {
                if (b != null) {
                    b.close();
                }
            }
        }
        assertEquals(0, room.held(), "closing gives everything back");
        assertArrayEquals(new int[] {9}, Arrays.copyOfRange(onDisk(dir.resolve("1.crc")), 2047, 2048));
        assertEquals(6, onDisk(dir.resolve("3.crc"))[5]);
    }

    /** A sidecar file of {@code values}, written apart from {@link BlockSums}. */
    private Path sidecar(String name, int... values) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(values.length * 4);
        for (int v : values) {
            b.putInt(v);
        }
        return Files.write(dir.resolve(name), b.array());
    }

    @Test
    void aReadHoldsTheSidecarUntilACheckpointIntervalPassesWithoutReads() throws Exception {
        int[] values = new int[100];
        Arrays.setAll(values, i -> 1000 + i);
        Path file = sidecar("r.crc", values);
        SumMemory room = new SumMemory(1 << 20);
        Counting io = new Counting(FileIoFactory.real().open(file, true));
        try (BlockSums sums = new BlockSums(io, room)) {
            assertArrayEquals(new int[] {1003, 1004}, sums.getForRead(3, 2));
            int afterFirst = io.reads;
            assertTrue(sums.held(), "held after a read");
            assertEquals(100 * 4, room.held(), "room taken for 100 entries");
            for (int i = 0; i < 50; i++) {
                assertArrayEquals(new int[] {1000 + i, 1000 + i + 1}, sums.getForRead(i, 2));
            }
            assertArrayEquals(new int[] {1099, 0, 0}, sums.getForRead(99, 3), "past the file's end: 0, as from the file");
            assertEquals(afterFirst, io.reads, "later reads take their entries from memory");

            assertFalse(sums.releaseIfUnread(), "read in this interval: kept");
            assertTrue(sums.held());
            assertTrue(sums.releaseIfUnread(), "a whole interval without a read: let go");
            assertFalse(sums.held());
            assertEquals(0, room.held(), "its room given back");
            assertEquals(0, io.writes, "nothing was pending: nothing written");
            assertArrayEquals(new int[] {1007}, sums.get(7, 1));
            assertEquals(afterFirst + 1, io.reads, "not held: read from the file again");
        }
        assertArrayEquals(values, onDisk(file), "the file is unchanged");
    }

    @Test
    void aHeldCopyTakesWritesAndIsNotLetGoWhileTheyArePending() throws Exception {
        Path file = sidecar("w.crc", 1, 2, 3, 4);
        try (BlockSums sums = new BlockSums(FileIoFactory.real().open(file, true), new SumMemory(1 << 20))) {
            assertArrayEquals(new int[] {2}, sums.getForRead(1, 1));
            sums.put(2, new int[] {30, 40, 50}, null);
            assertFalse(sums.releaseIfUnread(), "read since the last sweep");
            assertFalse(sums.releaseIfUnread(), "entries not written back: kept");
            assertTrue(sums.held());
            assertArrayEquals(new int[] {1, 2, 30, 40, 50}, sums.getForRead(0, 5));
            sums.force();
            assertFalse(sums.releaseIfUnread(), "read since the last sweep");
            assertTrue(sums.releaseIfUnread(), "written back and unread: let go");
            assertArrayEquals(new int[] {1, 2, 30, 40, 50}, sums.get(0, 5));
        }
        assertArrayEquals(new int[] {1, 2, 30, 40, 50}, onDisk(file));
    }

    @Test
    void readsHoldAtMostHalfTheRoomAndWritersStillFindTheirs() throws Exception {
        SumMemory room = new SumMemory(4 * 64 * 4); // four sidecars of 64 entries; reads may hold two
        BlockSums[] chunks = new BlockSums[4];
        Counting refused = null;
        try {
            for (int c = 0; c < 4; c++) {
                int[] v = new int[64];
                Arrays.fill(v, c + 1);
                FileIo io = FileIoFactory.real().open(sidecar(c + ".crc", v), true);
                chunks[c] = new BlockSums(c == 2 ? (refused = new Counting(io)) : io, room);
            }
            for (int c = 0; c < 3; c++) {
                assertArrayEquals(new int[] {c + 1, c + 1}, chunks[c].getForRead(10, 2), "chunk " + c + " reads right held or not");
            }
            assertTrue(chunks[0].held());
            assertTrue(chunks[1].held());
            assertFalse(chunks[2].held(), "reads would hold more than half the room");
            assertEquals(2 * 64 * 4, room.held());
            int sizes = refused.sizes;
            assertArrayEquals(new int[] {3}, chunks[2].getForRead(11, 1));
            assertEquals(sizes, refused.sizes, "refused in this interval: not tried again per read");
            chunks[2].put(0, new int[] {7}, null);
            chunks[3].put(0, new int[] {8}, null);
            assertTrue(chunks[2].held(), "a writer takes the other half");
            assertTrue(chunks[3].held(), "a writer takes the other half");
            assertEquals(room.limit(), room.held());
        } finally {
            for (BlockSums b : chunks) {
                if (b != null) {
                    b.close();
                }
            }
        }
        assertEquals(0, room.held());
        assertEquals(8, onDisk(dir.resolve("3.crc"))[0]);
        assertEquals(4, onDisk(dir.resolve("3.crc"))[1]);
    }

    @Test
    void aReadOfAChunkWithoutChecksumsHoldsNothing() throws Exception {
        Path file = dir.resolve("empty.crc");
        SumMemory room = new SumMemory(1 << 20);
        try (BlockSums sums = new BlockSums(FileIoFactory.real().open(file, true), room)) {
            assertArrayEquals(new int[] {0, 0}, sums.getForRead(0, 2));
            assertFalse(sums.held());
            assertEquals(0, room.held());
        }
    }

    @Test
    void withoutRoomZeroingWritesTheFileAtOnce() throws Exception {
        Path file = dir.resolve("c.crc");
        try (BlockSums sums = new BlockSums(FileIoFactory.real().open(file, true), new SumMemory(0))) {
            sums.put(0, new int[] {1, 2, 3, 4, 5}, null);
            sums.zero(1, 3);
            sums.zero(4, 100); // only what exists
            assertFalse(sums.held());
            assertArrayEquals(new int[] {1, 0, 0, 4, 0}, onDisk(file));
            assertArrayEquals(new int[] {1, 0, 0, 4, 0}, sums.get(0, 5));
        }
    }

    /** The chunk's stripe writes while a checkpoint forces and releases from another thread: after a last force the file equals the model. */
    @Test
    void concurrentWritesAndCheckpointsLeaveTheFileEqualToTheLastValues() throws Exception {
        Path file = dir.resolve("c.crc");
        int[] model = new int[4096];
        ExecutorService checkpoint = Executors.newSingleThreadExecutor();
        AtomicBoolean stop = new AtomicBoolean();
        try (BlockSums sums = new BlockSums(FileIoFactory.real().open(file, true), SumMemory.UNLIMITED)) {
            Future<Integer> forces = checkpoint.submit(() -> {
                int n = 0;
                Random r = new Random(2);
                while (!stop.get()) {
                    if (r.nextInt(4) == 0) {
                        sums.release();
                    } else {
                        sums.force();
                    }
                    n++;
                }
                return n;
            });
            Random r = new Random(1);
            for (int step = 0; step < 200_000; step++) {
                int first = r.nextInt(model.length - 8);
                int[] v = new int[1 + r.nextInt(8)];
                for (int i = 0; i < v.length; i++) {
                    v[i] = r.nextInt() | 1;
                }
                sums.put(first, v, null);
                System.arraycopy(v, 0, model, first, v.length);
                if (step % 1000 == 0) {
                    assertArrayEquals(Arrays.copyOfRange(model, first, first + v.length), sums.get(first, v.length));
                }
            }
            stop.set(true);
            assertTrue(forces.get(30, TimeUnit.SECONDS) > 1, "the checkpoint thread ran alongside");
            sums.force();
            int[] disk = onDisk(file);
            assertArrayEquals(Arrays.copyOf(model, disk.length), disk);
        } finally {
            checkpoint.shutdownNow();
        }
    }
}
