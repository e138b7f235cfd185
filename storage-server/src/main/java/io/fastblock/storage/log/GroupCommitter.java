package io.fastblock.storage.log;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.StorageMetrics;
import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The single writer of the log. It takes every append queued since its last round, writes them
 * in order, makes them durable with one fsync per touched segment (normally exactly one), then
 * shows them in the index's cache, completes the callers' futures and only then hands the index
 * batch with the new checkpoint to RocksDB ({@link ExtentIndex#prepare}). When more appends
 * already wait, that RocksDB write is put off: the next commits' index changes join the same
 * batch (at most {@link #MAX_JOINED} commits), and it is written once none wait. Writers
 * that arrive while an fsync runs are queued and share the next one. The cleaner's moved records
 * go through the same queue in small batches, so they share fsyncs with foreground writes and
 * never hold this thread for long.
 *
 * <p>A full disk fails only the batch that hit it ({@link NoSpaceException}): the partial tail
 * is cut off again and the log keeps going. Any other I/O error leaves the tail of unknown shape,
 * so the store refuses further appends until a restart replays and truncates it.
 */
final class GroupCommitter {
    private static final Logger LOG = LoggerFactory.getLogger(GroupCommitter.class);
    private static final int MAX_BATCH = 1024;
    /** Commits whose index changes may share one RocksDB write. */
    static final int MAX_JOINED = 8;

    /** {@code trimLength} >= 0 marks a trim record of that range (its data is empty). */
    private record Append(ChunkId chunk, long offset, long sequence, long originSegment, long originPosition, ByteBuf data,
                          CompletableFuture<Void> done, int trimLength) {
        Append(ChunkId chunk, long offset, long sequence, long originSegment, long originPosition, ByteBuf data,
               CompletableFuture<Void> done) {
            this(chunk, offset, sequence, originSegment, originPosition, data, done, -1);
        }

        boolean moved() {
            return originSegment >= 0;
        }

        boolean trim() {
            return trimLength >= 0;
        }
    }

    private static final Append STOP = new Append(null, 0, 0, -1, -1, null, null);

    private final SegmentSet segments;
    private final LogPreallocator preallocator;
    private final ExtentIndex index;
    private final StorageMetrics metrics;
    private final LiveBytes liveBytes;
    private final DiskSpace space;
    private final LinkedBlockingQueue<Append> queue = new LinkedBlockingQueue<>();
    private final Thread thread;
    private volatile boolean accepting = true;
    private volatile IOException failure;
    /** Segment of the last checkpoint written to the index: segments before it are never replayed. */
    private volatile long checkpointSegment;
    /** The last commit's index changes while RocksDB has not taken them (only this thread), and its segment. */
    private ExtentIndex.Prepared unindexed;
    private long unindexedSegment;

    GroupCommitter(SegmentSet segments, ExtentIndex index, StorageMetrics metrics, LiveBytes liveBytes, DiskSpace space,
                   long checkpointSegment, LogPreallocator preallocator) {
        this.preallocator = preallocator;
        this.segments = segments;
        this.index = index;
        this.metrics = metrics;
        this.liveBytes = liveBytes;
        this.space = space;
        this.checkpointSegment = checkpointSegment;
        this.thread = new Thread(this::run, "log-group-commit");
        this.thread.setDaemon(true);
        this.thread.start();
    }

    /** Queues an append; takes ownership of {@code data}. Completes once durable and indexed. */
    CompletableFuture<Void> append(ChunkId chunk, long offset, long sequence, ByteBuf data) {
        return enqueue(new Append(chunk, offset, sequence, -1, -1, data, new CompletableFuture<>()));
    }

    /** Queues a trim record of {@code [offset, offset + length)}. Completes once durable and indexed (as a hole). */
    CompletableFuture<Void> trim(ChunkId chunk, long offset, long sequence, int length) {
        return enqueue(new Append(chunk, offset, sequence, -1, -1, io.netty.buffer.Unpooled.EMPTY_BUFFER,
                new CompletableFuture<>(), length));
    }

    /** Queues a moved record (cleaner): indexed only where the index still reads from the origin run. */
    CompletableFuture<Void> move(ChunkId chunk, long offset, long sequence, long originSegment, long originPosition, ByteBuf data) {
        return enqueue(new Append(chunk, offset, sequence, originSegment, originPosition, data, new CompletableFuture<>()));
    }

    private CompletableFuture<Void> enqueue(Append a) {
        IOException failed = failure;
        if (failed != null || !accepting) {
            a.data.release();
            a.done.completeExceptionally(failed != null ? new IOException("log store failed earlier: " + failed.getMessage(), failed)
                    : new IOException("log store is closing"));
            return a.done;
        }
        queue.add(a);
        return a.done;
    }

    long checkpointSegment() {
        return checkpointSegment;
    }

    private void run() {
        List<Append> batch = new ArrayList<>();
        boolean stopping = false;
        while (!stopping || !queue.isEmpty()) {
            try {
                if (unindexed != null && queue.isEmpty()) {
                    writeIndex(); // nothing more joins it: a pending batch never outlasts the busy spell
                }
                Append first = stopping ? queue.poll() : queue.take();
                if (first == null) {
                    break;
                }
                batch.add(first);
                queue.drainTo(batch, MAX_BATCH - 1);
                if (batch.remove(STOP)) {
                    stopping = true;
                }
                if (!batch.isEmpty()) {
                    long t = System.nanoTime();
                    commit(batch);
                    metrics.logCommitTime.record(System.nanoTime() - t, TimeUnit.NANOSECONDS);
                }
            } catch (InterruptedException e) {
                stopping = true;
            } finally {
                batch.clear();
            }
        }
    }

    private void commit(List<Append> all) {
        if (failure != null) {
            failAll(all, new IOException("log store failed earlier: " + failure.getMessage(), failure));
            release(all);
            return;
        }
        List<Append> batch = admit(all);
        if (batch.isEmpty()) {
            return;
        }
        List<ExtentIndex.IndexedWrite> writes = new ArrayList<>(batch.size());
        // Where each touched segment ended before this batch, to cut a partial batch off again.
        Map<LogSegment, Long> touched = new LinkedHashMap<>();
        boolean written = false;
        long batchBytes = 0;
        LogSegment current = segments.active();
        try {
            for (Append a : batch) {
                ByteBuffer[] data = a.data.nioBuffers(a.data.readerIndex(), a.data.readableBytes());
                int length = a.trim() ? a.trimLength : a.data.readableBytes();
                int recordBytes = LogRecord.headerSize(a.moved()) + a.data.readableBytes();
                LogSegment seg = segments.forAppend(recordBytes);
                ByteBuffer header = a.trim() ? LogRecord.trimHeader(seg.number(), a.chunk, a.offset, a.sequence, a.trimLength)
                        : LogRecord.header(seg.number(), a.chunk, a.offset, a.sequence, a.originSegment, a.originPosition, data);
                if (seg != current) {
                    // Rolled on: the sealed segment is forced (cut back to its records) before any record of the next one.
                    touched.putIfAbsent(current, current.size());
                    current = seg;
                }
                touched.putIfAbsent(seg, seg.size());
                ByteBuffer[] parts = new ByteBuffer[data.length + 1];
                parts[0] = header;
                System.arraycopy(data, 0, parts, 1, data.length);
                long pos = seg.append(parts);
                seg.summarize(pos, header);
                batchBytes += recordBytes;
                writes.add(new ExtentIndex.IndexedWrite(a.chunk, a.offset, length, a.sequence, seg.number(), pos,
                        recordBytes, a.originSegment, a.originPosition, a.trim()));
            }
            for (LogSegment seg : touched.keySet()) {
                seg.writePending();
            }
            written = true;
            for (LogSegment seg : touched.keySet()) {
                long t = System.nanoTime();
                seg.force();
                metrics.logFsyncTime.record(System.nanoTime() - t, TimeUnit.NANOSECONDS);
                metrics.logFsyncs.increment();
            }
            metrics.logAppends.increment(batch.size());
            LogSegment last = segments.active();
            // If the last commit left its RocksDB batch pending (appends were waiting), this one joins it.
            ExtentIndex.Prepared indexed = index.prepare(writes, new LogPosition(last.number(), last.size()), true);
            liveBytes.apply(indexed.delta());
            preallocator.afterCommit(last, batchBytes);
            // Forced, and visible to lookups: the writers are answered before RocksDB takes the batch,
            // which cut a QD1 write's latency by about 5% (docs/performance.md). A moved record is
            // answered only after: the cleaner then syncs the index and deletes the record's origin.
            boolean moved = false;
            for (Append a : batch) {
                if (a.moved()) {
                    moved = true;
                } else {
                    a.done.complete(null);
                }
            }
            // RocksDB takes the batch now unless more records already wait: then the next commit's
            // records join it, and this thread starts on them without a RocksDB write in between.
            // At most MAX_JOINED commits share one, so the cache, which is not trimmed while a batch
            // is pending, does not grow without bound. A moved record's batch goes now (see above).
            if (moved || queue.isEmpty() || index.pendingPrepares() >= MAX_JOINED) {
                unindexed = null;
                index.write(indexed);
                checkpointSegment = last.number();
            } else {
                unindexed = indexed;
                unindexedSegment = last.number();
            }
        } catch (IOException e) {
            if (!written && NoSpaceException.isNoSpace(e) && cutBack(touched)) {
                LOG.warn("log disk full: {} appends failed, the log stays as it was", batch.size());
                failAll(batch, new NoSpaceException("log disk is full: " + e.getMessage(), e));
                return;
            }
            fatal(batch, e);
            return;
        } catch (RuntimeException e) {
            fatal(batch, new IOException(e.toString(), e));
            return;
        } finally {
            release(batch);
        }
        for (Append a : batch) {
            a.done.complete(null);
        }
    }

    /** Hands a commit's pending index batch to RocksDB when no commit followed to join it; a refusal stops the store. */
    private void writeIndex() {
        ExtentIndex.Prepared p = unindexed;
        unindexed = null;
        try {
            index.write(p);
            checkpointSegment = unindexedSegment;
        } catch (IOException | RuntimeException e) {
            if (failure == null) {
                failure = e instanceof IOException io ? io : new IOException(e.toString(), e);
                LOG.error("index write failed; the log store stops accepting writes", e);
            }
        }
    }

    /** Fails foreground appends that would eat into the reserve; returns the rest. */
    private List<Append> admit(List<Append> all) {
        long foreground = 0;
        for (Append a : all) {
            if (!a.moved()) {
                foreground += LogRecord.HEADER + a.data.readableBytes();
            }
        }
        if (foreground == 0) {
            return all;
        }
        try {
            space.check(foreground);
            return all;
        } catch (IOException e) {
            List<Append> kept = new ArrayList<>();
            List<Append> refused = new ArrayList<>();
            for (Append a : all) {
                (a.moved() ? kept : refused).add(a);
            }
            NoSpaceException full = e instanceof NoSpaceException n ? n : new NoSpaceException(e.getMessage(), e);
            failAll(refused, full);
            release(refused);
            return kept;
        }
    }

    /** Cuts the segments back to where they ended before the failed batch; false if that fails too. */
    private boolean cutBack(Map<LogSegment, Long> touched) {
        try {
            for (Map.Entry<LogSegment, Long> t : touched.entrySet()) {
                t.getKey().cutBack(t.getValue());
            }
            return true;
        } catch (IOException | RuntimeException e) {
            LOG.error("cannot cut a failed append off the log", e);
            return false;
        }
    }

    private void fatal(List<Append> batch, IOException e) {
        // The log's tail is now of unknown shape; refuse further appends until a restart replays and truncates it.
        failure = e;
        LOG.error("log append failed; the log store stops accepting writes", e);
        failAll(batch, e);
    }

    private static void release(List<Append> batch) {
        for (Append a : batch) {
            a.data.release();
        }
    }

    private static void failAll(List<Append> batch, IOException e) {
        for (Append a : batch) {
            a.done.completeExceptionally(e);
        }
    }

    /** Stops taking appends, commits what is queued, and waits for the thread to finish. */
    void close() {
        accepting = false;
        queue.add(STOP);
        try {
            thread.join(TimeUnit.SECONDS.toMillis(30));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Append a;
        while ((a = queue.poll()) != null) {
            if (a != STOP) {
                a.data.release();
                a.done.completeExceptionally(new IOException("log store closed"));
            }
        }
    }
}
