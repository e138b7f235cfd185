package io.fastblock.storage.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Zeroing ranges of real files: large ones become holes whose blocks go back to the filesystem. */
class HolePunchTest {
    @TempDir
    Path dir;

    @Test
    void aLargeRangeIsPunchedASmallOneZeroedBothReadAsZeros() throws Exception {
        Path file = dir.resolve("f");
        byte[] data = new byte[8 << 20];
        new Random(1).nextBytes(data);
        try (FileIo io = FileIoFactory.real().open(file, true)) {
            io.writeFully(ByteBuffer.wrap(data), 0);
            io.force(true);
            long before = DiskUsage.allocatedBytes(file);
            assertTrue(before >= data.length, "written file occupies its size: " + before);

            io.zeroRange(1 << 20, 4 << 20);
            io.zeroRange(6 << 20, 8192);
            io.force(true);
            long after = DiskUsage.allocatedBytes(file);
            assertTrue(before - after >= (4 << 20) - 65536, "4 MiB went back: " + before + " -> " + after);
            assertEquals(data.length, io.size(), "the file keeps its size");

            java.util.Arrays.fill(data, 1 << 20, 5 << 20, (byte) 0);
            java.util.Arrays.fill(data, 6 << 20, (6 << 20) + 8192, (byte) 0);
            ByteBuffer back = ByteBuffer.allocate(data.length);
            io.readFully(back, 0);
            assertArrayEquals(data, back.array());
        }
    }
}
