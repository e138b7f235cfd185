package io.fastblock.storage.log;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.StorageMetrics;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.RocksDBException;

/**
 * The committer answers a write once its record is forced and the index's cache shows it, before
 * RocksDB takes the index batch ({@link ExtentIndex#prepare}, {@link ExtentIndex#write}). Real
 * RocksDB, real files; a gate or a failure is put in front of RocksDB's write.
 */
class AnswerBeforeIndexWriteTest {
    private static final ChunkId CHUNK = new ChunkId(7, 3);
    private static final long SEGMENT = 1 << 20;

    @TempDir
    Path dir;
    private LogStore store;
    private ExtentIndex index;

    @AfterEach
    void close() throws IOException {
        if (store != null) {
            store.close();
        }
        if (index != null) {
            index.close();
        }
    }

    /** Blocks RocksDB writes until opened; counts the writes that reached it. */
    private static final class Gate implements ExtentIndex.BatchWriter {
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch open = new CountDownLatch(1);

        @Override
        public void write(org.rocksdb.RocksDB db, org.rocksdb.WriteOptions options, org.rocksdb.WriteBatch batch)
                throws RocksDBException {
            entered.countDown();
            try {
                open.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            db.write(options, batch);
        }
    }

    @Test
    void aWriteIsAnsweredWhileRocksDbStillWaitsForItsBatch() throws Exception {
        store = LogStore.open(dir, SEGMENT, new StorageMetrics());
        Gate gate = new Gate();
        store.index().writeBatchesWith(gate);
        byte[] data = LogFixture.bytes(4096, 1);
        CompletableFuture<Void> done = store.append(CHUNK, 8192, 1, Unpooled.wrappedBuffer(data));
        assertTrue(gate.entered.await(30, TimeUnit.SECONDS), "the committer never reached RocksDB");
        // The committer is inside RocksDB's write now, so the answer came before it.
        assertTrue(done.isDone() && !done.isCompletedExceptionally(), "the write waited for the index batch");
        gate.open.countDown();
        assertArrayEquals(data, LogFixture.read(store, CHUNK, 8192, 4096));
        assertEquals(1, LogFixture.indexKeys(store));
    }

    @Test
    void aMovedRecordIsAnsweredOnlyOnceRocksDbHasItsBatch() throws Exception {
        store = LogStore.open(dir, SEGMENT, new StorageMetrics());
        byte[] data = LogFixture.bytes(4096, 2);
        LogFixture.write(store, CHUNK, 0, data);
        Extent origin = store.scanIndex(null, 10).get(0).extent();
        Gate gate = new Gate();
        store.index().writeBatchesWith(gate);
        // The cleaner syncs the index and deletes the origin once a move is answered: not before RocksDB has it.
        CompletableFuture<Void> moved = store.rewrite(CHUNK, 0, origin.sequence(), origin.segment(), origin.recordPosition(),
                Unpooled.wrappedBuffer(data.clone()));
        assertTrue(gate.entered.await(30, TimeUnit.SECONDS), "the committer never reached RocksDB");
        assertFalse(moved.isDone(), "a moved record was answered before RocksDB took its batch");
        gate.open.countDown();
        moved.get(30, TimeUnit.SECONDS);
        Extent now = store.scanIndex(null, 10).get(0).extent();
        assertTrue(now.segment() != origin.segment() || now.recordPosition() != origin.recordPosition(),
                "the index still reads the origin run");
        assertArrayEquals(data, LogFixture.read(store, CHUNK, 0, 4096));
    }

    @Test
    void aBatchRocksDbRefusesStopsTheIndexAndARestartReplaysTheAnsweredWrite() throws Exception {
        store = LogStore.open(dir, SEGMENT, new StorageMetrics());
        byte[] old = LogFixture.bytes(4096, 3);
        LogFixture.write(store, CHUNK, 0, old);
        assertEquals(1, LogFixture.indexKeys(store)); // the scan writes the answered batch to RocksDB first
        AtomicBoolean refuse = new AtomicBoolean(true);
        java.util.concurrent.CountDownLatch refused = new java.util.concurrent.CountDownLatch(1);
        store.index().writeBatchesWith((db, options, batch) -> {
            if (refuse.get()) {
                refused.countDown();
                throw new RocksDBException("injected: no space for the memtable");
            }
            db.write(options, batch);
        });
        byte[] newer = LogFixture.bytes(4096, 4);
        // Forced in the log, so answered; RocksDB's refusal comes after the answer.
        store.append(CHUNK, 0, 2, Unpooled.wrappedBuffer(newer)).get(30, TimeUnit.SECONDS);
        // The answer may come before the committer hands RocksDB the batch; the read below must come after
        // (the index is one monitor, so once the refusal is under way the read waits for its outcome).
        assertTrue(refused.await(30, TimeUnit.SECONDS), "RocksDB was given the answered write's batch");
        // The cache shows the newer bytes and RocksDB the older ones: the index refuses rather than pick one.
        assertThrows(IOException.class, () -> LogFixture.read(store, CHUNK, 0, 4096));
        CompletableFuture<Void> after = store.append(CHUNK, 4096, 3, Unpooled.wrappedBuffer(LogFixture.bytes(4096, 5)));
        assertThrows(Exception.class, () -> after.get(30, TimeUnit.SECONDS));
        refuse.set(false);
        store.close();
        store = LogStore.open(dir, SEGMENT, new StorageMetrics());
        assertArrayEquals(newer, LogFixture.read(store, CHUNK, 0, 4096), "the answered write was lost");
    }

    @Test
    void prepareShowsTheBatchToLookupsAndRocksDbTakesItOnWrite() throws Exception {
        index = ExtentIndex.open(dir.resolve("index"));
        ExtentIndex.Prepared p = index.prepare(List.of(new ExtentIndex.IndexedWrite(CHUNK, 0, 4096, 1, 1, 0)),
                new LogPosition(1, 4096 + LogRecord.HEADER));
        assertEquals(1, index.find(CHUNK, 0, 4096).size(), "a lookup missed the prepared batch");
        assertEquals(null, index.checkpoint(), "RocksDB took the batch before write");
        index.write(p);
        assertEquals(new LogPosition(1, 4096 + LogRecord.HEADER), index.checkpoint());
        assertEquals(1, index.scan(null, 10).size());
        index.write(p); // written already: nothing more
        assertEquals(1, index.scan(null, 10).size());
    }

    @Test
    void aScanWritesThePendingBatchFirst() throws Exception {
        index = ExtentIndex.open(dir.resolve("index"));
        index.prepare(List.of(new ExtentIndex.IndexedWrite(CHUNK, 0, 4096, 1, 1, 0)), new LogPosition(1, 4096 + LogRecord.HEADER));
        assertEquals(1, index.scan(null, 10).size(), "a scan missed a batch whose writers may have been answered");
        assertEquals(new LogPosition(1, 4096 + LogRecord.HEADER), index.checkpoint());
    }

    @Test
    void anotherWriterWritesThePendingBatchFirst() throws Exception {
        index = ExtentIndex.open(dir.resolve("index"));
        index.prepare(List.of(new ExtentIndex.IndexedWrite(CHUNK, 0, 8192, 1, 1, 0)), new LogPosition(1, 8192 + LogRecord.HEADER));
        // A fold drops the run's first 4 KiB. Were the pending batch written after it, the bytes would come back.
        index.remove(List.of(new ExtentIndex.Piece(CHUNK, 0, 4096, 1, 0)));
        List<ExtentIndex.Entry> entries = index.scan(null, 10);
        assertEquals(1, entries.size());
        assertEquals(4096, entries.get(0).extent().chunkOffset());
        assertEquals(8192, entries.get(0).extent().end());
        assertEquals(new LogPosition(1, 8192 + LogRecord.HEADER), index.checkpoint());
    }

    @Test
    void aRefusedPreparedBatchFailsEveryLaterCall() throws Exception {
        index = ExtentIndex.open(dir.resolve("index"));
        index.writeBatchesWith((db, options, batch) -> {
            throw new RocksDBException("injected");
        });
        ExtentIndex.Prepared p = index.prepare(List.of(new ExtentIndex.IndexedWrite(CHUNK, 0, 4096, 1, 1, 0)),
                new LogPosition(1, 4096 + LogRecord.HEADER));
        IOException refused = assertThrows(IOException.class, () -> index.write(p));
        assertTrue(refused.getMessage().contains("injected"), refused.getMessage());
        assertThrows(IOException.class, () -> index.find(CHUNK, 0, 4096));
        assertThrows(IOException.class, () -> index.prepare(List.of(), new LogPosition(1, 0)));
        assertThrows(IOException.class, () -> index.remove(List.of(new ExtentIndex.Piece(CHUNK, 0, 4096, 1, 0))));
    }
}
