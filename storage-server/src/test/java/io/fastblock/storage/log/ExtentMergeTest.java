package io.fastblock.storage.log;

import static io.fastblock.storage.log.LogFixture.bytes;
import static io.fastblock.storage.log.LogFixture.indexKeys;
import static io.fastblock.storage.log.LogFixture.read;
import static io.fastblock.storage.log.LogFixture.write;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.StorageMetrics;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ExtentMergeTest {
    private static final ChunkId CHUNK = new ChunkId(9, 0);
    private static final int BLOCK = 4096;
    private static final int BLOCKS = 512;

    @TempDir
    Path dir;
    private final StorageMetrics metrics = new StorageMetrics();
    private LogStore store;

    @AfterEach
    void close() throws IOException {
        if (store != null) {
            store.close();
        }
    }

    private void open() throws IOException {
        store = LogStore.open(dir, 64L << 20, metrics);
    }

    private byte[] writeSequentially(ChunkId chunk, int blocks) throws Exception {
        byte[] ref = new byte[blocks * BLOCK];
        for (int i = 0; i < blocks; i++) {
            byte[] d = bytes(BLOCK, i);
            write(store, chunk, (long) i * BLOCK, d);
            System.arraycopy(d, 0, ref, i * BLOCK, BLOCK);
        }
        return ref;
    }

    /** Runs are capped at 1 MiB of file span: 512 records of 4 KiB + header make three. */
    private static int expectedKeys(int blocks) {
        int perRun = ExtentIndex.MAX_RUN_BYTES / (BLOCK + LogRecord.HEADER);
        return (blocks + perRun - 1) / perRun;
    }

    @Test
    void aSequentiallyWrittenChunkCostsFewKeysAndReadsBack() throws Exception {
        open();
        byte[] ref = writeSequentially(CHUNK, BLOCKS);
        assertEquals(expectedKeys(BLOCKS), indexKeys(store));
        assertArrayEquals(ref, read(store, CHUNK, 0, ref.length));
        // reads that start and end inside records in the middle of a run
        assertArrayEquals(Arrays.copyOfRange(ref, 300_001, 300_001 + 70_000), read(store, CHUNK, 300_001, 70_000));
        // an overwrite across record boundaries splits the run; both sides still read through it
        byte[] over = bytes(10_000, 99);
        write(store, CHUNK, 500_000, over);
        System.arraycopy(over, 0, ref, 500_000, over.length);
        assertArrayEquals(ref, read(store, CHUNK, 0, ref.length));
        assertEquals(expectedKeys(BLOCKS) + 2, indexKeys(store));
        assertEquals((long) ref.length, store.liveBytes().total());
        store.close();
        open();
        assertArrayEquals(ref, read(store, CHUNK, 0, ref.length));
    }

    @Test
    void interleavedChunksDoNotMerge() throws Exception {
        open();
        ChunkId other = new ChunkId(9, 1);
        for (int i = 0; i < 20; i++) {
            write(store, CHUNK, (long) i * BLOCK, bytes(BLOCK, i));
            write(store, other, (long) i * BLOCK, bytes(BLOCK, 100 + i));
        }
        assertEquals(40, indexKeys(store), "records of one chunk are not contiguous on disk");
        for (int i = 0; i < 20; i++) {
            assertArrayEquals(bytes(BLOCK, 100 + i), read(store, other, (long) i * BLOCK, BLOCK));
        }
    }

    @Test
    void replayRebuildsMergedRuns() throws Exception {
        open();
        write(store, CHUNK, 0, bytes(BLOCK, 0));
        store.close();
        Path snapshot = dir.resolve("index-snapshot");
        LogStoreTest.copyTree(dir.resolve("index"), snapshot);
        open();
        byte[] ref = writeSequentially(CHUNK, 100);
        store.close();
        LogStoreTest.replaceTree(snapshot, dir.resolve("index"));
        open();
        assertEquals(100, store.recovery().replayedRecords());
        assertEquals(1, indexKeys(store));
        assertArrayEquals(ref, read(store, CHUNK, 0, ref.length));
    }

    @Test
    void aCorruptRecordInsideARunFailsOnlyReadsOfItsBytes() throws Exception {
        open();
        byte[] ref = writeSequentially(CHUNK, 10);
        assertEquals(1, indexKeys(store));
        long fifth = 4L * (BLOCK + LogRecord.HEADER);
        try (RandomAccessFile f = new RandomAccessFile(LogSegment.pathOf(dir.resolve("log"), 1).toFile(), "rw")) {
            f.seek(fifth + LogRecord.HEADER + 17);
            int v = f.read();
            f.seek(fifth + LogRecord.HEADER + 17);
            f.write(v ^ 0x40);
        }
        CorruptRecordException e = assertThrows(CorruptRecordException.class, () -> read(store, CHUNK, 4L * BLOCK, 100));
        assertTrue(e.getMessage().contains("CRC32C") && e.getMessage().contains("position " + fifth), e.getMessage());
        assertArrayEquals(Arrays.copyOfRange(ref, 0, 4 * BLOCK), read(store, CHUNK, 0, 4 * BLOCK));
    }
}
