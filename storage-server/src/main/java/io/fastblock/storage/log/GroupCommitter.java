package io.fastblock.storage.log;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.StorageMetrics;
import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.IdentityHashMap;
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
 * applies them to the index with the new checkpoint and completes the callers' futures. Writers
 * that arrive while an fsync runs are queued and share the next one.
 */
final class GroupCommitter {
    private static final Logger LOG = LoggerFactory.getLogger(GroupCommitter.class);
    private static final int MAX_BATCH = 1024;

    private record Append(ChunkId chunk, long offset, long sequence, ByteBuf data, CompletableFuture<Void> done) {
    }

    private static final Append STOP = new Append(null, 0, 0, null, null);

    private final SegmentSet segments;
    private final ExtentIndex index;
    private final StorageMetrics metrics;
    private final LiveBytes liveBytes;
    private final LinkedBlockingQueue<Append> queue = new LinkedBlockingQueue<>();
    private final Thread thread;
    private volatile boolean accepting = true;
    private volatile IOException failure;

    GroupCommitter(SegmentSet segments, ExtentIndex index, StorageMetrics metrics, LiveBytes liveBytes) {
        this.segments = segments;
        this.index = index;
        this.metrics = metrics;
        this.liveBytes = liveBytes;
        this.thread = new Thread(this::run, "log-group-commit");
        this.thread.setDaemon(true);
        this.thread.start();
    }

    /** Queues an append; takes ownership of {@code data}. Completes once durable and indexed. */
    CompletableFuture<Void> append(ChunkId chunk, long offset, long sequence, ByteBuf data) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        IOException failed = failure;
        if (failed != null || !accepting) {
            data.release();
            done.completeExceptionally(failed != null ? new IOException("log store failed earlier: " + failed.getMessage(), failed)
                    : new IOException("log store is closing"));
            return done;
        }
        queue.add(new Append(chunk, offset, sequence, data, done));
        return done;
    }

    private void run() {
        List<Append> batch = new ArrayList<>();
        boolean stopping = false;
        while (!stopping || !queue.isEmpty()) {
            try {
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
                    commit(batch);
                }
            } catch (InterruptedException e) {
                stopping = true;
            } finally {
                batch.clear();
            }
        }
    }

    private void commit(List<Append> batch) {
        if (failure != null) {
            failAll(batch, new IOException("log store failed earlier: " + failure.getMessage(), failure));
            return;
        }
        List<ExtentIndex.IndexedWrite> writes = new ArrayList<>(batch.size());
        Map<LogSegment, Boolean> touched = new IdentityHashMap<>();
        try {
            for (Append a : batch) {
                ByteBuffer[] data = a.data.nioBuffers(a.data.readerIndex(), a.data.readableBytes());
                ByteBuffer header = LogRecord.header(a.chunk, a.offset, a.sequence, data);
                int length = a.data.readableBytes();
                LogSegment seg = segments.forAppend(LogRecord.HEADER + (long) length);
                ByteBuffer[] parts = new ByteBuffer[data.length + 1];
                parts[0] = header;
                System.arraycopy(data, 0, parts, 1, data.length);
                long pos = seg.append(parts);
                touched.put(seg, Boolean.TRUE);
                writes.add(new ExtentIndex.IndexedWrite(a.chunk, a.offset, length, a.sequence, seg.number(), pos));
            }
            for (LogSegment seg : touched.keySet()) {
                seg.force();
                metrics.logFsyncs.increment();
            }
            metrics.logAppends.increment(batch.size());
            LogSegment last = segments.active();
            Map<Long, Long> dead = index.apply(writes, new LogPosition(last.number(), last.size()));
            liveBytes.record(writes, dead);
        } catch (IOException | RuntimeException e) {
            // The log's tail is now of unknown shape; refuse further appends until a restart replays and truncates it.
            failure = e instanceof IOException io ? io : new IOException(e.toString(), e);
            LOG.error("log append failed; the log store stops accepting writes", e);
            failAll(batch, failure);
            return;
        } finally {
            for (Append a : batch) {
                a.data.release();
            }
        }
        for (Append a : batch) {
            a.done.complete(null);
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
