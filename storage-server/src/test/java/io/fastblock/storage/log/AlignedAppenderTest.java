package io.fastblock.storage.log;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.fastblock.storage.io.FaultInjectingFileIo;
import io.fastblock.storage.io.FileIo;
import io.fastblock.storage.io.FileIoFactory;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Records written through whole-block writes ({@link AlignedAppender}) land byte for byte where a
 * buffered append would put them, with zeros after them to the end of their last block, across
 * batches that end inside a block, batches larger than one write, a file cut back in the middle of a
 * block and a fresh appender on a file whose records end inside a block. The fault-injecting
 * factory's direct handles refuse any write that is not whole blocks, as the kernel would.
 */
class AlignedAppenderTest {
    private static final int BLOCK = FaultInjectingFileIo.DIRECT_BLOCK;

    @TempDir
    Path dir;

    private final FaultInjectingFileIo.Factory disk = new FaultInjectingFileIo.Factory(7);

    @Test
    void batchesArePackedAsABufferedAppendWouldPackThemAndTheLastBlockIsPaddedWithZeros() throws IOException {
        Path file = dir.resolve("a.seg");
        Random random = new Random(42);
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        try (FileIo reader = disk.open(file, true); AlignedAppender appender = new AlignedAppender(disk.openDirect(file), reader)) {
            for (int batch = 0; batch < 300; batch++) {
                ByteBuffer[] parts = randomParts(random, batch % 50 == 49);
                appender.write(parts, expected.size());
                for (ByteBuffer p : parts) {
                    byte[] b = new byte[p.remaining()];
                    p.duplicate().get(b);
                    expected.write(b);
                }
                assertFileHolds(file, expected.toByteArray());
            }
        }
    }

    @Test
    void theWrittenPartsAreNotConsumed() throws IOException {
        Path file = dir.resolve("b.seg");
        try (FileIo reader = disk.open(file, true); AlignedAppender appender = new AlignedAppender(disk.openDirect(file), reader)) {
            ByteBuffer part = ByteBuffer.wrap(new byte[] {1, 2, 3});
            appender.write(new ByteBuffer[] {part}, 0);
            assertEquals(0, part.position());
            assertEquals(3, part.remaining());
        }
    }

    @Test
    void afterTheFileIsCutInsideABlockTheNextBatchReadsThatBlockBackFromTheFile() throws IOException {
        Path file = dir.resolve("c.seg");
        byte[] first = pattern(3 * BLOCK + 1000, 1);
        try (FileIo reader = disk.open(file, true); AlignedAppender appender = new AlignedAppender(disk.openDirect(file), reader)) {
            appender.write(new ByteBuffer[] {ByteBuffer.wrap(first)}, 0);
            long cut = 2 * BLOCK + 123;
            reader.truncate(cut);
            appender.forget();
            byte[] second = pattern(5000, 2);
            appender.write(new ByteBuffer[] {ByteBuffer.wrap(second)}, cut);
            byte[] want = Arrays.copyOf(first, (int) cut + second.length);
            System.arraycopy(second, 0, want, (int) cut, second.length);
            assertFileHolds(file, want);
        }
    }

    @Test
    void aNewAppenderContinuesInsideTheLastBlockOfAnExistingFile() throws IOException {
        Path file = dir.resolve("d.seg");
        byte[] old = pattern(BLOCK + 77, 3);
        Files.write(file, old);
        byte[] more = pattern(2 * BLOCK, 4);
        try (FileIo reader = disk.open(file, false); AlignedAppender appender = new AlignedAppender(disk.openDirect(file), reader)) {
            appender.write(new ByteBuffer[] {ByteBuffer.wrap(more)}, old.length);
        }
        byte[] want = Arrays.copyOf(old, old.length + more.length);
        System.arraycopy(more, 0, want, old.length, more.length);
        assertFileHolds(file, want);
    }

    @Test
    void recordsEndingInsideABlockOfAFileThatEndsBeforeThemAreAnError() throws IOException {
        Path file = dir.resolve("e.seg");
        Files.write(file, pattern(100, 5));
        try (FileIo reader = disk.open(file, false); AlignedAppender appender = new AlignedAppender(disk.openDirect(file), reader)) {
            IOException e = assertThrows(IOException.class,
                    () -> appender.write(new ByteBuffer[] {ByteBuffer.wrap(new byte[10])}, 500));
            assertTrue(e.getMessage().contains("ends before its records' end at 500"), e.getMessage());
        }
    }

    @Test
    void zerosGoInWholeBlocksOnly() throws IOException {
        Path file = dir.resolve("f.seg");
        Files.write(file, pattern(3 * BLOCK, 6));
        try (FileIo reader = disk.open(file, false); AlignedAppender appender = new AlignedAppender(disk.openDirect(file), reader)) {
            assertThrows(IllegalArgumentException.class, () -> appender.writeZeros(100, BLOCK));
            assertThrows(IllegalArgumentException.class, () -> appender.writeZeros(BLOCK, 100));
            appender.writeZeros(BLOCK, 2L * BLOCK + AlignedAppender.STAGE_BYTES);
        }
        byte[] after = Files.readAllBytes(file);
        assertEquals(3 * BLOCK + AlignedAppender.STAGE_BYTES, after.length);
        assertArrayEquals(pattern(BLOCK, 6), Arrays.copyOf(after, BLOCK));
        assertTrue(Arrays.equals(new byte[after.length - BLOCK], Arrays.copyOfRange(after, BLOCK, after.length)));
    }

    @Test
    void theFaultInjectingDirectHandleRefusesWritesThatAreNotWholeBlocks() throws IOException {
        Path file = dir.resolve("g.seg");
        Files.write(file, new byte[0]);
        try (FileIo direct = disk.openDirect(file)) {
            IOException e = assertThrows(IOException.class, () -> direct.write(ByteBuffer.allocateDirect(100), 0));
            assertTrue(e.getMessage().contains("whole blocks"), e.getMessage());
            assertThrows(IOException.class, () -> direct.write(ByteBuffer.allocateDirect(BLOCK), 512));
        }
    }

    /** On a filesystem with O_DIRECT (this machine's ext4; not tmpfs) the real factory opens a direct handle. */
    @Test
    void realFilesAreWrittenAroundThePageCacheWhereTheFilesystemAllows() throws IOException {
        Path file = dir.resolve("h.seg");
        Files.write(file, new byte[0]);
        assumeFalse(Files.getFileStore(file).type().equals("tmpfs"), "no O_DIRECT on tmpfs");
        FileIo direct = FileIoFactory.real().openDirect(file);
        assertNotNull(direct, "O_DIRECT refused on " + Files.getFileStore(file).type());
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        try (FileIo reader = FileIoFactory.real().open(file, false); AlignedAppender appender = new AlignedAppender(direct, reader)) {
            assertTrue(direct.writeAlignment() >= 512 && Integer.bitCount(direct.writeAlignment()) == 1,
                    "alignment " + direct.writeAlignment());
            Random random = new Random(9);
            for (int batch = 0; batch < 40; batch++) {
                ByteBuffer[] parts = randomParts(random, batch == 20);
                appender.write(parts, expected.size());
                for (ByteBuffer p : parts) {
                    byte[] b = new byte[p.remaining()];
                    p.duplicate().get(b);
                    expected.write(b);
                }
            }
            reader.force(false);
        }
        byte[] want = expected.toByteArray();
        byte[] got = Files.readAllBytes(file);
        assertArrayEquals(want, Arrays.copyOf(got, want.length));
        assertNull(FileIoFactory.withoutDirectWrites(FileIoFactory.real()).openDirect(file));
    }

    /** Parts of 0..9000 bytes, heap and direct; a large batch crosses more than one write. */
    private static ByteBuffer[] randomParts(Random random, boolean large) {
        int n = 1 + random.nextInt(8);
        List<ByteBuffer> parts = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int len = random.nextInt(9001);
            if (large && i == 0) {
                len = AlignedAppender.STAGE_BYTES + random.nextInt(3 * BLOCK);
            }
            byte[] b = new byte[len];
            random.nextBytes(b);
            ByteBuffer p = random.nextBoolean() ? ByteBuffer.wrap(b) : ByteBuffer.allocateDirect(len).put(b).flip();
            parts.add(p);
        }
        return parts.toArray(ByteBuffer[]::new);
    }

    private static byte[] pattern(int length, int seed) {
        byte[] b = new byte[length];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static void assertFileHolds(Path file, byte[] records) throws IOException {
        byte[] got = Files.readAllBytes(file);
        long padded = (records.length + BLOCK - 1) / BLOCK * BLOCK;
        assertEquals(Math.max(padded, 0), got.length, "file size: the records' last block, whole");
        assertArrayEquals(records, Arrays.copyOf(got, records.length));
        assertTrue(Arrays.equals(new byte[got.length - records.length], Arrays.copyOfRange(got, records.length, got.length)),
                "zeros after the records");
    }
}
