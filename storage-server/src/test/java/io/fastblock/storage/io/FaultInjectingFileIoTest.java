package io.fastblock.storage.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FaultInjectingFileIoTest {
    @TempDir
    Path dir;

    private static byte[] fill(int len, int value) {
        byte[] b = new byte[len];
        Arrays.fill(b, (byte) value);
        return b;
    }

    @Test
    void powerLossKeepsForcedDataAndDropsTheRest() throws Exception {
        FaultInjectingFileIo.Factory disk = new FaultInjectingFileIo.Factory(1);
        Path f = dir.resolve("f");
        FileIo io = disk.open(f, true);
        disk.syncDirectory(dir);
        io.writeFully(ByteBuffer.wrap(fill(4096, 1)), 0);
        io.force(false);
        io.writeFully(ByteBuffer.wrap(fill(1000, 2)), 100);
        io.writeFully(ByteBuffer.wrap(fill(4096, 3)), 4096);
        // A process crash keeps everything: the bytes are in the file already.
        assertEquals(8192, Files.size(f));
        disk.powerLoss(FaultInjectingFileIo.Tear.NONE);
        assertArrayEquals(fill(4096, 1), Files.readAllBytes(f), "forced content, unforced overwrite and extension gone");
        IOException dead = assertThrows(IOException.class, () -> io.write(ByteBuffer.wrap(new byte[1]), 0));
        assertTrue(dead.getMessage().contains("power lost"));
        assertThrows(IOException.class, () -> disk.open(f, false));
        disk.powerOn();
        try (FileIo again = disk.open(f, false)) {
            assertEquals(4096, again.size());
        }
    }

    @Test
    void tornLastWriteKeepsASectorAlignedPrefix() throws Exception {
        for (long seed = 0; seed < 5; seed++) {
            FaultInjectingFileIo.Factory disk = new FaultInjectingFileIo.Factory(seed);
            Path f = dir.resolve("t" + seed);
            FileIo io = disk.open(f, true);
            disk.syncDirectory(dir);
            io.writeFully(ByteBuffer.wrap(fill(8192, 1)), 0);
            io.force(false);
            io.writeFully(ByteBuffer.wrap(fill(3000, 9)), 300);
            disk.powerLoss(FaultInjectingFileIo.Tear.LAST_WRITE);
            byte[] after = Files.readAllBytes(f);
            int nines = 0;
            while (after[300 + nines] == 9) {
                nines++;
            }
            assertTrue(nines < 3000, "the write was torn, not kept whole");
            assertEquals(0, (300 + nines) % FaultInjectingFileIo.SECTOR, "tear at a sector boundary, kept " + nines);
            for (int i = 300 + nines; i < 8192; i++) {
                assertEquals(1, after[i], "byte " + i + " back to the forced content");
            }
        }
    }

    @Test
    void fileWhoseDirectoryWasNotSyncedDisappears() throws Exception {
        FaultInjectingFileIo.Factory disk = new FaultInjectingFileIo.Factory(1);
        FileIo a = disk.open(dir.resolve("a"), true);
        a.writeFully(ByteBuffer.wrap(fill(10, 1)), 0);
        a.force(true);
        disk.syncDirectory(dir);
        FileIo b = disk.open(dir.resolve("b"), true);
        b.writeFully(ByteBuffer.wrap(fill(10, 1)), 0);
        b.force(true);
        disk.powerLoss(FaultInjectingFileIo.Tear.NONE);
        assertTrue(Files.exists(dir.resolve("a")));
        assertFalse(Files.exists(dir.resolve("b")), "fsynced data but never a durable name");
    }

    @Test
    void unforcedTruncateIsUndone() throws Exception {
        FaultInjectingFileIo.Factory disk = new FaultInjectingFileIo.Factory(1);
        Path f = dir.resolve("f");
        FileIo io = disk.open(f, true);
        disk.syncDirectory(dir);
        io.writeFully(ByteBuffer.wrap(fill(2048, 5)), 0);
        io.force(true);
        io.truncate(100);
        io.writeFully(ByteBuffer.wrap(fill(50, 6)), 100);
        disk.powerLoss(FaultInjectingFileIo.Tear.NONE);
        assertArrayEquals(fill(2048, 5), Files.readAllBytes(f));
    }
}
