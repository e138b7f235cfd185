package io.fastblock.storage.io;

import static io.fastblock.storage.TestBuffers.random;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.storage.TestBuffers;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Views of a real file's cached pages: what a range holds, which ranges are refused (not whole
 * pages, past the end, a page not in memory, a handle that cannot map), that a view shows later
 * writes, and when a file that grew is mapped again.
 */
class ResidentPagesTest {
    private static final int PAGE = ResidentPages.PAGE;
    private static final long HOUR = 3_600_000_000_000L;

    @TempDir
    Path dir;

    /** The view's bytes; releases it. */
    private static byte[] bytes(ByteBuf view) {
        return TestBuffers.drain(view, view.readableBytes());
    }

    private FileIo written(String name, byte[] data) throws Exception {
        FileIo f = FileIoFactory.real().open(dir.resolve(name), true);
        f.writeFully(ByteBuffer.wrap(data), 0);
        return f;
    }

    @Test
    void aCachedRangeIsAReadOnlyViewOfTheFile() throws Exception {
        byte[] data = random(64 * PAGE, 1);
        try (FileIo f = written("f", data)) {
            ResidentPages r = ResidentPages.of(f);
            assertNotNull(r, "the C library can be called here (JNA)");
            ByteBuf view = r.range(8L * PAGE, 16 * PAGE);
            assertNotNull(view, "pages just written are in the page cache");
            assertTrue(view.isReadOnly());
            assertThrows(ReadOnlyBufferException.class, () -> view.setByte(0, 1));
            assertThrows(ReadOnlyBufferException.class, () -> view.nioBuffer().put(0, (byte) 1));
            assertArrayEquals(Arrays.copyOfRange(data, 8 * PAGE, 24 * PAGE), bytes(view));
            assertArrayEquals(Arrays.copyOfRange(data, 0, PAGE), bytes(r.range(0, PAGE)), "the first page");
            assertArrayEquals(Arrays.copyOfRange(data, 63 * PAGE, 64 * PAGE), bytes(r.range(63L * PAGE, PAGE)), "the last page");
        }
    }

    @Test
    void rangesThatAreNotWholePagesInsideTheFileAreRefused() throws Exception {
        try (FileIo f = written("f", random(16 * PAGE + 100, 2))) {
            ResidentPages r = ResidentPages.of(f, HOUR);
            assertNull(r.range(100, PAGE), "unaligned offset");
            assertNull(r.range(0, PAGE + 1), "not whole pages");
            assertNull(r.range(0, 0), "empty");
            assertNull(r.range(16L * PAGE, PAGE), "the partial last page");
            assertNull(r.range(15L * PAGE, 2 * PAGE), "past the end");
            r.range(15L * PAGE, PAGE).release(); // the last whole page
        }
    }

    @Test
    void aRangeWithAPageNotInMemoryIsRefusedUntilAReadBringsItBack() throws Exception {
        byte[] data = random(32 * PAGE, 3);
        Path p = dir.resolve("f");
        try (FileIo f = written("f", data)) {
            f.force(true);
            PageCache.evict(p);
            ResidentPages r = ResidentPages.of(f, HOUR);
            assertNull(r.range(0, 32 * PAGE), "nothing cached");
            f.readFully(ByteBuffer.allocate(4 * PAGE), 8L * PAGE); // brings pages 8..11 back (and maybe more)
            // The pages read are there; the view is not read (pages this process has touched through
            // the mapping stay mapped, and posix_fadvise does not drop mapped pages).
            r.range(8L * PAGE, 4 * PAGE).release();
            PageCache.evict(p);
            assertNull(r.range(8L * PAGE, 4 * PAGE), "evicted again");
            assertNull(r.range(0, 32 * PAGE));
            assertEquals(0, PageCache.cachedPages(p), "the checks themselves read nothing in");
        }
    }

    @Test
    void aViewShowsWritesMadeAfterIt() throws Exception {
        byte[] data = random(8 * PAGE, 4);
        byte[] later = random(PAGE, 5);
        try (FileIo f = written("f", data)) {
            ByteBuf view = ResidentPages.of(f).range(0, 8 * PAGE);
            f.writeFully(ByteBuffer.wrap(later), 2L * PAGE);
            System.arraycopy(later, 0, data, 2 * PAGE, PAGE);
            assertArrayEquals(data, bytes(view));
        }
    }

    @Test
    void aFileThatGrewIsMappedAgainOnlyOnceTheIntervalIsOver() throws Exception {
        byte[] more = random(16 * PAGE, 6);
        try (FileIo f = written("f", random(16 * PAGE, 7)); FileIo g = written("g", random(16 * PAGE, 7))) {
            ResidentPages slow = ResidentPages.of(f, HOUR);
            ResidentPages now = ResidentPages.of(g, 0);
            slow.range(0, PAGE).release();
            now.range(0, PAGE).release();
            f.writeFully(ByteBuffer.wrap(more), 16L * PAGE);
            g.writeFully(ByteBuffer.wrap(more), 16L * PAGE);
            assertNull(slow.range(20L * PAGE, PAGE), "mapped a moment ago: read as before");
            assertArrayEquals(Arrays.copyOfRange(more, 4 * PAGE, 5 * PAGE), bytes(now.range(20L * PAGE, PAGE)));
        }
    }

    @Test
    void aHandleThatCannotMapGivesNoViews() throws Exception {
        try (FileIo f = written("f", random(4 * PAGE, 8))) {
            assertNull(ResidentPages.of(new ForwardingFileIo(f)).range(0, PAGE));
        }
    }

    @Test
    void theMappingIsUnmappedOnceClosedAndItsLastViewReleased() throws Exception {
        Path p = dir.resolve("f");
        try (FileIo f = written("f", random(16 * PAGE, 9))) {
            ResidentPages r = ResidentPages.of(f);
            assertEquals(0, Mappings.of(p));
            ByteBuf view = r.range(0, 4 * PAGE);
            ByteBuf other = r.range(8L * PAGE, PAGE);
            assertEquals(1, Mappings.of(p), "one mapping for every view");
            other.release();
            r.close();
            assertEquals(1, Mappings.of(p), "a view is still out");
            assertEquals(4 * PAGE, bytes(view).length); // releases it
            assertEquals(0, Mappings.of(p), "unmapped with the last view");
            assertNull(r.range(0, PAGE), "closed: reads as before");
            assertEquals(0, Mappings.of(p));
        }
    }

    @Test
    void aDeletedFilesMappingGoesWithTheCloseSoItsBlocksAreFreed() throws Exception {
        Path p = dir.resolve("f");
        FileIo f = written("f", random(64 * PAGE, 10));
        ResidentPages r = ResidentPages.of(f);
        bytes(r.range(0, 64 * PAGE));
        f.close();
        Files.delete(p);
        assertEquals(1, Mappings.of(p), "the mapping holds the deleted file");
        r.close();
        assertEquals(0, Mappings.of(p));
    }

    @Test
    void aRemapUnmapsTheMappingItReplaces() throws Exception {
        Path p = dir.resolve("f");
        try (FileIo f = written("f", random(4 * PAGE, 11))) {
            ResidentPages r = ResidentPages.of(f, 0);
            ByteBuf old = r.range(0, PAGE);
            f.writeFully(ByteBuffer.wrap(random(4 * PAGE, 12)), 4L * PAGE);
            bytes(r.range(4L * PAGE, PAGE)); // the file grew: mapped again
            assertEquals(2, Mappings.of(p), "the old mapping stays while its view is out");
            old.release();
            assertEquals(1, Mappings.of(p));
            r.close();
            assertEquals(0, Mappings.of(p));
        }
    }

    @Test
    void aDroppedMappingCountsAsMappedUntilItsLastViewIsReleased() throws Exception {
        Path p = dir.resolve("f");
        try (FileIo f = written("f", random(8 * PAGE, 14))) {
            ResidentPages r = ResidentPages.of(f);
            assertFalse(r.mapped());
            bytes(r.range(0, PAGE));
            assertTrue(r.mapped(), "held");
            ByteBuf view = r.range(0, 4 * PAGE);
            r.unmap();
            assertTrue(r.mapped(), "dropped, but a view is out");
            assertEquals(1, Mappings.of(p));
            view.release();
            assertFalse(r.mapped());
            assertEquals(0, Mappings.of(p));
            bytes(r.range(0, PAGE));
            assertTrue(r.mapped(), "a later read maps it again");
            r.close();
            assertFalse(r.mapped());
        }
    }
}
