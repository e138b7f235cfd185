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
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A store's limit on mapped files, with real files and this process's memory map: never more
 * mappings than the limit, the file read least recently unmapped first, a failed mapping answered
 * by copying (not by an error) and no mapping tried again for a while, and the default limit taken
 * from the kernel's {@code vm.max_map_count}.
 */
class MappingBudgetTest {
    private static final int PAGE = ResidentPages.PAGE;
    private static final long HOUR = 3_600_000_000_000L;

    @TempDir
    Path dir;
    private final List<FileIo> open = new ArrayList<>();

    @AfterEach
    void closeFiles() throws IOException {
        for (FileIo f : open) {
            f.close();
        }
    }

    private FileIo written(String name, byte[] data) throws IOException {
        FileIo f = FileIoFactory.real().open(dir.resolve(name), true);
        open.add(f);
        f.writeFully(ByteBuffer.wrap(data), 0);
        return f;
    }

    private ResidentPages file(String name, MappingBudget budget) throws IOException {
        ResidentPages r = ResidentPages.of(written(name, random(16 * PAGE, name.hashCode())), HOUR, budget);
        assertNotNull(r, "the C library can be called here (JNA)");
        return r;
    }

    /** Reads a range through {@code r}; whether it came as a view. */
    private static boolean read(ResidentPages r) throws IOException {
        ByteBuf view = r.range(0, 4 * PAGE);
        if (view == null) {
            return false;
        }
        view.release();
        return true;
    }

    private long mapped(String name) throws IOException {
        return Mappings.of(dir.resolve(name));
    }

    @Test
    void neverMoreMappingsThanTheLimit() throws Exception {
        MappingBudget budget = new MappingBudget(2);
        List<ResidentPages> files = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            files.add(file("f" + i, budget));
        }
        for (int round = 0; round < 3; round++) {
            for (ResidentPages r : files) {
                assertTrue(read(r), "every read is a view: a mapping makes room for itself");
                assertTrue(budget.mapped() <= 2);
                long inMemoryMap = 0;
                for (int i = 0; i < 5; i++) {
                    inMemoryMap += mapped("f" + i);
                }
                assertEquals(budget.mapped(), inMemoryMap, "the process maps what the budget counts");
            }
        }
        assertEquals(2, budget.mapped());
        assertEquals(13, budget.evictions(), "15 reads of 5 files round robin through 2 slots: all but the first 2 map");
    }

    @Test
    void aFileReadSinceTheHandPassedKeepsItsMapping() throws Exception {
        MappingBudget budget = new MappingBudget(3);
        ResidentPages a = file("a", budget);
        ResidentPages b = file("b", budget);
        ResidentPages c = file("c", budget);
        ResidentPages d = file("d", budget);
        ResidentPages e = file("e", budget);
        read(a);
        read(b);
        read(c);
        read(d); // the hand clears a, b and c, and takes a's slot
        assertEquals(0, mapped("a"));
        read(b); // b read again since the hand passed; c was not
        read(e);
        assertEquals(0, mapped("c"), "c, not read since the hand passed, gave its slot");
        assertEquals(1, mapped("b"), "b, the oldest mapping but read again, kept it");
        assertEquals(1, mapped("d"));
        assertEquals(1, mapped("e"));
        assertTrue(b.isMapped() && d.isMapped() && e.isMapped());
        assertFalse(a.isMapped() || c.isMapped());
    }

    @Test
    void aViewOutlivesTheEvictionOfItsMappingAndUnmapsItWhenReleased() throws Exception {
        MappingBudget budget = new MappingBudget(1);
        byte[] data = random(16 * PAGE, 21);
        ResidentPages a = ResidentPages.of(written("a", data), HOUR, budget);
        ResidentPages b = file("b", budget);
        ByteBuf view = a.range(4L * PAGE, 8 * PAGE);
        assertTrue(read(b), "b takes the only slot");
        assertFalse(a.isMapped());
        assertEquals(1, mapped("a"), "a's view is still out");
        assertArrayEquals(Arrays.copyOfRange(data, 4 * PAGE, 12 * PAGE), TestBuffers.drain(view, 8 * PAGE));
        assertEquals(0, mapped("a"), "unmapped with the view");
        assertTrue(read(a), "a maps again, in b's place");
        assertEquals(0, mapped("b"));
    }

    @Test
    void aClosedFileGivesItsSlotBack() throws Exception {
        MappingBudget budget = new MappingBudget(2);
        ResidentPages a = file("a", budget);
        ResidentPages b = file("b", budget);
        read(a);
        read(b);
        a.close();
        assertEquals(1, budget.mapped());
        assertEquals(0, mapped("a"));
        read(file("c", budget));
        assertEquals(0, budget.evictions(), "the closed file's slot was free");
        assertTrue(b.isMapped());
    }

    @Test
    void aLimitOfZeroMapsNothing() throws Exception {
        MappingBudget budget = new MappingBudget(0);
        ResidentPages a = file("a", budget);
        assertFalse(read(a));
        assertEquals(0, mapped("a"));
        assertThrows(IllegalArgumentException.class, () -> new MappingBudget(-1));
    }

    @Test
    void aFailedMappingCopiesAndStopsMappingForAWhile() throws Exception {
        MappingBudget budget = new MappingBudget(4);
        FileIo good = written("good", random(16 * PAGE, 22));
        FileIo failing = new ForwardingFileIo(written("bad", random(16 * PAGE, 23))) {
            @Override
            public ByteBuffer mapReadOnly(long size) throws IOException {
                throw new IOException("Map failed"); // what FileChannel.map throws past vm.max_map_count
            }
        };
        ResidentPages bad = ResidentPages.of(failing, HOUR, budget);
        assertNull(bad.range(0, 4 * PAGE), "refused, not an error: the caller reads with pread");
        assertEquals(0, budget.mapped(), "the failed file holds no slot");
        ResidentPages ok = ResidentPages.of(good, HOUR, budget);
        assertNull(ok.range(0, 4 * PAGE), "no mapping is tried during the back-off");
        assertEquals(0, Mappings.of(dir.resolve("good")));
    }

    @Test
    void theDefaultIsASixteenthOfTheKernelsLimit() throws Exception {
        Path f = dir.resolve("max_map_count");
        Files.writeString(f, "262144\n");
        assertEquals(16384, MappingBudget.defaultLimit(f));
        assertEquals(MappingBudget.LINUX_DEFAULT_MAX_MAP_COUNT / 16, MappingBudget.defaultLimit(dir.resolve("missing")));
        Files.writeString(f, "7\n");
        assertEquals(1, MappingBudget.defaultLimit(f), "at least one");
        long kernel = Long.parseLong(Files.readAllLines(Path.of("/proc/sys/vm/max_map_count")).get(0).trim());
        assertTrue(kernel >= 1024, "vm.max_map_count read whole: " + kernel);
        assertEquals(kernel / 16, MappingBudget.defaultLimit());
    }
}
