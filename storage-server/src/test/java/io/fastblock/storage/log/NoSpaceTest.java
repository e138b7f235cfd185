package io.fastblock.storage.log;

import static io.fastblock.storage.log.LogFixture.bytes;
import static io.fastblock.storage.log.LogFixture.read;
import static io.fastblock.storage.log.LogFixture.write;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.StorageMetrics;
import io.netty.buffer.Unpooled;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NoSpaceTest {
    private static final ChunkId CHUNK = new ChunkId(6, 0);

    @TempDir
    Path dir;

    private static Throwable appendFailure(LogStore store, long offset, byte[] data) {
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> store.append(CHUNK, offset, 1, Unpooled.wrappedBuffer(data)).get(10, TimeUnit.SECONDS));
        return e.getCause();
    }

    @Test
    void appendsBelowTheReserveFailCleanlyAndSucceedAgainWhenSpaceReturns() throws Exception {
        StorageMetrics metrics = new StorageMetrics();
        byte[] first = bytes(5000, 1);
        try (LogStore store = LogStore.open(dir, 1 << 20, metrics, BaseFiles.NONE, 0)) {
            write(store, CHUNK, 0, first);
            long disk = store.diskBytes();
            // a reserve above what the filesystem has free: the disk counts as full
            long free = Files.getFileStore(dir).getUsableSpace();
            store.reservedSpace(free + (1L << 30));
            Throwable t = appendFailure(store, 2000, bytes(5000, 2));
            assertInstanceOf(NoSpaceException.class, t);
            assertTrue(t.getMessage().contains("reserved"), t.getMessage());
            assertEquals(disk, store.diskBytes(), "nothing was written");
            assertArrayEquals(first, read(store, CHUNK, 0, 5000), "reads go on");
            assertEquals(1.0, metrics.registry().get("fastblock.log.nospace.rejections").counter().count());

            store.reservedSpace(1 << 20);
            byte[] later = bytes(3000, 3);
            write(store, CHUNK, 4000, later);
            byte[] want = new byte[7000];
            System.arraycopy(first, 0, want, 0, 5000);
            System.arraycopy(later, 0, want, 4000, 3000);
            assertArrayEquals(want, read(store, CHUNK, 0, 7000));
        }
        try (LogStore store = LogStore.open(dir, 1 << 20, metrics)) {
            assertEquals(0, store.recovery().replayedRecords());
            assertEquals(first.length + 3000 - 1000, store.liveBytes().total());
        }
    }

    @Test
    void theCleanerMayUseTheReserveToGiveSpaceBack() throws Exception {
        try (LogStore store = LogStore.open(dir, 16 * 1024, new StorageMetrics(), BaseFiles.NONE, 0)) {
            for (int i = 0; i < 40; i++) {
                write(store, CHUNK, (i % 4) * 3000L, bytes(3000, i));
            }
            store.reservedSpace(Files.getFileStore(dir).getUsableSpace() + (1L << 30));
            assertInstanceOf(NoSpaceException.class, appendFailure(store, 0, bytes(10, 0)));
            long before = store.diskBytes();
            LogCleaner cleaner = new LogCleaner(store, new LogCleaner.Settings(0.85, 0.95, 0, 1.0, 16 * 1024, 5));
            while (cleaner.cleanOnce() > 0) {
                // until nothing more to free
            }
            assertTrue(store.diskBytes() < before / 2, before + " -> " + store.diskBytes());
            for (int i = 0; i < 4; i++) {
                assertArrayEquals(bytes(3000, 36 + i), read(store, CHUNK, i * 3000L, 3000));
            }
        }
    }

    /** A real ENOSPC from the filesystem: the active segment is /dev/full. */
    @Test
    void enospcFromTheFilesystemFailsOnlyThatWrite() throws Exception {
        Path devFull = Path.of("/dev/full");
        assumeTrue(Files.isWritable(devFull), "needs /dev/full");
        byte[] first = bytes(4000, 1);
        try (LogStore store = LogStore.open(dir, 1 << 20, new StorageMetrics())) {
            write(store, CHUNK, 0, first);
        }
        Files.createSymbolicLink(LogSegment.pathOf(dir.resolve("log"), 2), devFull);
        try (LogStore store = LogStore.open(dir, 1 << 20, new StorageMetrics())) {
            Throwable t = appendFailure(store, 100, bytes(500, 2));
            assertInstanceOf(NoSpaceException.class, t);
            assertTrue(t.getMessage().contains("No space left on device"), t.getMessage());
            assertArrayEquals(first, read(store, CHUNK, 0, 4000), "reads go on");
            // still accepting: the next append meets the same full disk, not a dead store
            assertInstanceOf(NoSpaceException.class, appendFailure(store, 100, bytes(500, 3)));
        }
        Files.delete(LogSegment.pathOf(dir.resolve("log"), 2));
        try (LogStore store = LogStore.open(dir, 1 << 20, new StorageMetrics())) {
            assertArrayEquals(first, read(store, CHUNK, 0, 4000));
            write(store, CHUNK, 100, bytes(500, 4));
            assertArrayEquals(bytes(500, 4), read(store, CHUNK, 100, 500));
        }
    }
}
