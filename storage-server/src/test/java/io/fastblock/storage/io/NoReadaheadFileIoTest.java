package io.fastblock.storage.io;

import static io.fastblock.storage.TestBuffers.random;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The read-only handle without readahead, on real files: it reads what the file holds at any
 * position into any buffer, ends at the end of the file, and a read through it brings into the
 * page cache only the pages it asked for, where a read through an ordinary handle reads ahead
 * (counted with mincore on a mapping that is never touched).
 */
class NoReadaheadFileIoTest {
    private static final int PAGE = 4096;

    @TempDir
    Path dir;

    @Test
    void readsWhatTheFileHoldsIntoDirectAndHeapBuffersAndStopsAtItsEnd() throws Exception {
        byte[] bytes = random(3 * PAGE + 100, 1);
        Path f = Files.write(dir.resolve("f"), bytes);
        FileIo r = FileIoFactory.real().openNoReadahead(f);
        assertNotNull(r, "the C library can be called here (JNA)");
        try (r) {
            ByteBuffer direct = ByteBuffer.allocateDirect(5000).position(7);
            assertEquals(4993, r.read(direct, 10), "a read fills the buffer from its position");
            assertArrayEquals(Arrays.copyOfRange(bytes, 10, 10 + 4993), bytesOf(direct.flip().position(7)));
            ByteBuffer heap = ByteBuffer.allocate(400).position(50);
            assertEquals(100, r.read(heap, 3 * PAGE), "a read that reaches the end of the file is short");
            assertArrayEquals(Arrays.copyOfRange(bytes, 3 * PAGE, bytes.length), bytesOf(heap.flip().position(50)));
            assertEquals(-1, r.read(ByteBuffer.allocateDirect(10), bytes.length), "-1 at the end of the file");
            assertEquals(bytes.length, r.size());
            assertThrows(UnsupportedOperationException.class, () -> r.write(ByteBuffer.allocate(1), 0));
        }
        assertThrows(ClosedChannelException.class, () -> r.read(ByteBuffer.allocateDirect(1), 0));
    }

    @Test
    void aReadBringsInOnlyThePagesItAsksForWhereAnOrdinaryReadReadsAhead() throws Exception {
        Path f = dir.resolve("big");
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(random(16 << 20, 2)));
            ch.force(true);
        }
        long at = 4L << 20;
        PageCache.evict(f);
        assertEquals(0, PageCache.cachedPages(f), "the file's pages were dropped");
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
            ch.read(ByteBuffer.allocate(PAGE), at);
            ch.read(ByteBuffer.allocate(PAGE), at + PAGE);
        }
        long ordinary = PageCache.cachedPages(f);
        PageCache.evict(f);
        assertEquals(0, PageCache.cachedPages(f));
        try (FileIo r = FileIoFactory.real().openNoReadahead(f)) {
            r.read(ByteBuffer.allocateDirect(PAGE), at);
            r.read(ByteBuffer.allocateDirect(PAGE), at + PAGE);
        }
        long advised = PageCache.cachedPages(f);
        assertTrue(ordinary > 2, "an ordinary handle read ahead: " + ordinary + " pages cached after two 4 KiB reads");
        assertEquals(2, advised, "pages cached after two 4 KiB reads without readahead");
    }

    private static byte[] bytesOf(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }
}
