package io.fastblock.storage.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One gathered write of many buffers (the log's group commit) lands the same bytes as writing
 * them one by one, on a real file: more buffers than one writev takes (IOV_MAX is 1024), empty
 * ones, direct and heap, at an offset inside existing data, and positional I/O around it unharmed.
 */
class GatheredWriteTest {
    @TempDir
    Path dir;

    @Test
    void aGatheredWriteEqualsTheBuffersWrittenInTurn() throws Exception {
        Random rnd = new Random(7);
        List<ByteBuffer> parts = new ArrayList<>();
        ByteBuffer expected = ByteBuffer.allocate(4 << 20);
        for (int i = 0; i < 2500; i++) {
            int n = i % 10 == 0 ? 0 : 1 + rnd.nextInt(1500);
            byte[] b = new byte[n];
            rnd.nextBytes(b);
            ByteBuffer part = i % 2 == 0 ? ByteBuffer.allocateDirect(n + 8).position(8) : ByteBuffer.allocate(n + 3).position(3);
            part.put(b).position(part.position() - n);
            parts.add(part);
            expected.put(b);
        }
        expected.flip();
        byte[] head = new byte[5000];
        rnd.nextBytes(head);
        Path file = dir.resolve("f");
        try (FileIo io = FileIoFactory.real().open(file, true)) {
            io.writeFully(ByteBuffer.wrap(head), 0);
            io.writeFully(parts.toArray(ByteBuffer[]::new), 4096);
            ByteBuffer after = ByteBuffer.wrap(new byte[]{1, 2, 3});
            long end = 4096 + expected.remaining();
            io.writeFully(after, end); // positional writes are unaffected by the gathered one's position
            assertEquals(end + 3, io.size());
            for (ByteBuffer p : parts) {
                assertEquals(0, p.remaining(), "every buffer consumed");
            }
        }
        byte[] onDisk = Files.readAllBytes(file);
        byte[] want = new byte[onDisk.length];
        System.arraycopy(head, 0, want, 0, 4096);
        expected.get(want, 4096, expected.remaining());
        want[want.length - 3] = 1;
        want[want.length - 2] = 2;
        want[want.length - 1] = 3;
        assertArrayEquals(want, onDisk);
    }
}
