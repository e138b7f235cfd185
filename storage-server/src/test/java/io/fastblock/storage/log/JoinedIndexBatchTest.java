package io.fastblock.storage.log;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.StorageMetrics;
import io.fastblock.storage.io.FileIo;
import io.fastblock.storage.io.FileIoFactory;
import io.fastblock.storage.io.ForwardingFileIo;
import io.fastblock.storage.io.ForwardingFileIoFactory;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Commits that follow one another while appends wait share one RocksDB write: the later ones'
 * index changes join the batch RocksDB has not taken yet ({@link ExtentIndex#prepare} with
 * {@code join}). Real RocksDB, real files; RocksDB's writes are counted, and the commit thread's
 * first fsync is held so that an append queues behind it.
 */
class JoinedIndexBatchTest {
    private static final ChunkId CHUNK = new ChunkId(9, 1);
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

    /** Counts the batches RocksDB takes from {@code index} from now on. */
    private static AtomicInteger countWrites(ExtentIndex index) {
        AtomicInteger writes = new AtomicInteger();
        index.writeBatchesWith((db, options, batch) -> {
            writes.incrementAndGet();
            db.write(options, batch);
        });
        return writes;
    }

    private static ExtentIndex.IndexedWrite record(long offset, long sequence, long position) {
        return new ExtentIndex.IndexedWrite(CHUNK, offset, 4096, sequence, 1, position);
    }

    @Test
    void joinedPreparesReachRocksDbInOneWriteWithTheLastCheckpoint() throws Exception {
        index = ExtentIndex.open(dir.resolve("index"));
        AtomicInteger writes = countWrites(index);
        long recordBytes = 4096 + LogRecord.HEADER;
        ExtentIndex.Prepared first = index.prepare(List.of(record(0, 1, 0)), new LogPosition(1, recordBytes), true);
        // Not next to the first in the chunk, so the two stay two extents.
        ExtentIndex.Prepared second = index.prepare(List.of(record(65536, 2, recordBytes)), new LogPosition(1, 2 * recordBytes), true);
        assertEquals(2, index.pendingPrepares());
        assertEquals(0, writes.get(), "a joining prepare wrote the pending batch");
        assertEquals(1, index.find(CHUNK, 65536, 65536 + 4096).size(), "a lookup missed a joined prepare");

        index.write(second);
        assertEquals(1, writes.get());
        assertEquals(0, index.pendingPrepares());
        assertEquals(new LogPosition(1, 2 * recordBytes), index.checkpoint());
        index.write(first); // RocksDB has it already, inside the joined batch
        assertEquals(1, writes.get());
        assertEquals(2, index.scan(null, 10).size());
    }

    @Test
    void aPrepareThatDoesNotJoinWritesThePendingBatchFirst() throws Exception {
        index = ExtentIndex.open(dir.resolve("index"));
        AtomicInteger writes = countWrites(index);
        long recordBytes = 4096 + LogRecord.HEADER;
        index.prepare(List.of(record(0, 1, 0)), new LogPosition(1, recordBytes), true);
        ExtentIndex.Prepared second = index.prepare(List.of(record(4096, 2, recordBytes)), new LogPosition(1, 2 * recordBytes));
        assertEquals(1, writes.get());
        assertEquals(new LogPosition(1, recordBytes), index.checkpoint());
        assertEquals(1, index.pendingPrepares());
        index.write(second);
        assertEquals(2, writes.get());
        assertEquals(new LogPosition(1, 2 * recordBytes), index.checkpoint());
    }

    @Test
    void aCommitFollowedByWaitingAppendsSharesItsRocksDbWriteWithTheirs() throws Exception {
        CountDownLatch inForce = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicBoolean holdFirst = new AtomicBoolean(true);
        FileIoFactory files = new ForwardingFileIoFactory(FileIoFactory.real()) {
            @Override
            public FileIo open(Path file, boolean create) throws IOException {
                return new ForwardingFileIo(to.open(file, create)) {
                    @Override
                    public void force(boolean metadata) throws IOException {
                        if (Thread.currentThread().getName().equals("log-group-commit") && holdFirst.compareAndSet(true, false)) {
                            inForce.countDown();
                            try {
                                release.await(30, TimeUnit.SECONDS);
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                        }
                        super.force(metadata);
                    }
                };
            }
        };
        store = LogStore.open(dir, SEGMENT, new StorageMetrics(), BaseFiles.NONE, 0, files);
        AtomicInteger writes = countWrites(store.index());
        byte[] a = LogFixture.bytes(4096, 1);
        byte[] b = LogFixture.bytes(4096, 2);
        CompletableFuture<Void> first = store.append(CHUNK, 0, 1, Unpooled.wrappedBuffer(a));
        assertTrue(inForce.await(30, TimeUnit.SECONDS), "the commit thread never forced the first record");
        CompletableFuture<Void> second = store.append(CHUNK, 4096, 2, Unpooled.wrappedBuffer(b)); // waits behind that fsync
        release.countDown();
        first.get(30, TimeUnit.SECONDS);
        second.get(30, TimeUnit.SECONDS);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (store.index().pendingPrepares() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertEquals(0, store.index().pendingPrepares(), "the last commit left its index batch pending");
        assertEquals(1, writes.get(), "two commits, one behind the other, made more than one RocksDB write");
        assertEquals(store.appendPosition(), store.index().checkpoint());
        assertArrayEquals(a, LogFixture.read(store, CHUNK, 0, 4096));
        assertArrayEquals(b, LogFixture.read(store, CHUNK, 4096, 4096));
    }
}
