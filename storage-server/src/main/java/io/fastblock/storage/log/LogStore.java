package io.fastblock.storage.log;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.StorageMetrics;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tail's log-structured store: appends go to segment files shared by all chunks, made
 * durable by group commit and located through the {@link ExtentIndex}. Opening replays the
 * records after the index checkpoint and cuts the log at the first torn or corrupt record.
 */
public final class LogStore implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(LogStore.class);
    private static final int REPLAY_BATCH = 1024;

    private final SegmentSet segments;
    private final ExtentIndex index;
    private final StorageMetrics metrics;
    private final LiveBytes liveBytes = new LiveBytes();
    private final GroupCommitter committer;
    private final ExecutorService readers;
    private final RecoveryReport recovery;

    /** What opening found: records replayed into the index and bytes cut off a torn tail. */
    public record RecoveryReport(int replayedRecords, long truncatedBytes) {
    }

    private LogStore(Path dataDir, long segmentSize, StorageMetrics metrics, int readThreads) throws IOException {
        this.metrics = metrics;
        this.segments = new SegmentSet(dataDir.resolve("log"), segmentSize);
        ExtentIndex idx = ExtentIndex.open(dataDir.resolve("index"));
        this.index = idx;
        try {
            this.recovery = replay();
            liveBytes.seed(index.liveBytesBySegment());
        } catch (IOException | RuntimeException e) {
            idx.close();
            segments.close();
            throw e;
        }
        this.committer = new GroupCommitter(segments, index, metrics, liveBytes);
        AtomicInteger n = new AtomicInteger();
        this.readers = Executors.newFixedThreadPool(readThreads, r -> {
            Thread t = new Thread(r, "log-read-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    public static LogStore open(Path dataDir, long segmentSize, StorageMetrics metrics) throws IOException {
        return new LogStore(dataDir, segmentSize, metrics, 2);
    }

    public RecoveryReport recovery() {
        return recovery;
    }

    public LiveBytes liveBytes() {
        return liveBytes;
    }

    public StorageMetrics metrics() {
        return metrics;
    }

    /** Appends a write; takes ownership of {@code data}. Completes after the record is fsynced and indexed. */
    public CompletableFuture<Void> append(ChunkId chunk, long offset, long sequence, ByteBuf data) {
        if (data.readableBytes() > LogRecord.MAX_DATA) {
            data.release();
            return CompletableFuture.failedFuture(new IllegalArgumentException("write of " + data.readableBytes()
                    + " bytes exceeds " + LogRecord.MAX_DATA));
        }
        return committer.append(chunk, offset, sequence, data);
    }

    public CompletableFuture<ByteBuf> readAsync(ChunkId chunk, long offset, int length, ByteBufAllocator alloc) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return read(chunk, offset, length, alloc);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, readers);
    }

    /**
     * Reads {@code [offset, offset+length)} of a chunk: the newest data of each byte, zeros where
     * nothing was written. Every record touched is read whole and its CRC checked.
     * @throws CorruptRecordException if a record fails its check
     */
    public ByteBuf read(ChunkId chunk, long offset, int length, ByteBufAllocator alloc) throws IOException {
        long end = offset + length;
        List<Extent> found = index.find(chunk, offset, end);
        ByteBuf out = alloc.directBuffer(length, length);
        Map<LogPosition, ByteBuffer> records = new HashMap<>();
        try {
            out.setZero(0, length);
            out.writerIndex(length);
            for (Extent e : found) {
                LogPosition at = new LogPosition(e.segment(), e.recordPosition());
                ByteBuffer record = records.get(at);
                if (record == null) {
                    record = readRecord(chunk, at);
                    records.put(at, record);
                }
                long from = Math.max(offset, e.chunkOffset());
                long to = Math.min(end, e.end());
                int src = LogRecord.HEADER + e.dataOffset() + (int) (from - e.chunkOffset());
                ByteBuffer slice = record.duplicate();
                slice.position(src).limit(src + (int) (to - from));
                out.setBytes((int) (from - offset), slice);
            }
            return out;
        } catch (IOException | RuntimeException e) {
            out.release();
            throw e;
        }
    }

    private ByteBuffer readRecord(ChunkId chunk, LogPosition at) throws IOException {
        LogSegment seg = segments.get(at.segment());
        if (seg == null) {
            throw new CorruptRecordException("index points at missing segment " + at.segment());
        }
        ByteBuffer head = ByteBuffer.allocate(LogRecord.HEADER);
        LogRecord.Header h = seg.readFully(at.position(), head) ? LogRecord.parse(head.flip()) : null;
        if (h == null || !h.chunk().equals(chunk)) {
            metrics.corruptReads.increment();
            throw new CorruptRecordException("no valid record header for chunk " + chunk + " at segment "
                    + at.segment() + " position " + at.position());
        }
        ByteBuffer record = ByteBuffer.allocate(LogRecord.HEADER + h.length());
        if (!seg.readFully(at.position(), record)) {
            metrics.corruptReads.increment();
            throw new CorruptRecordException("record of chunk " + chunk + " at segment " + at.segment()
                    + " position " + at.position() + " is cut short");
        }
        record.flip();
        LogRecord.Header again = LogRecord.parse(record);
        if (again == null || !again.equals(h) || !LogRecord.verify(record, h)) {
            metrics.corruptReads.increment();
            throw new CorruptRecordException("CRC32C mismatch in record of chunk " + chunk + " at segment "
                    + at.segment() + " position " + at.position());
        }
        return record;
    }

    /** Re-indexes the records after the checkpoint; cuts the log at the first torn or corrupt record. */
    private RecoveryReport replay() throws IOException {
        LogPosition cp = index.checkpoint();
        int replayed = 0;
        long truncated = 0;
        List<ExtentIndex.IndexedWrite> pending = new ArrayList<>();
        for (LogSegment seg : segments.all()) {
            if (cp != null && seg.number() < cp.segment()) {
                continue;
            }
            long pos = cp != null && seg.number() == cp.segment() ? cp.position() : 0;
            long size = seg.size();
            if (pos > size) {
                LOG.error("segment {} is {} bytes but the index checkpoint is at {}; replaying from its start",
                        seg.number(), size, pos);
                pos = 0;
            }
            ByteBuffer head = ByteBuffer.allocate(LogRecord.HEADER);
            boolean cut = false;
            while (pos < size) {
                head.clear();
                LogRecord.Header h = seg.readFully(pos, head) ? LogRecord.parse(head.flip()) : null;
                if (h == null || pos + LogRecord.HEADER + h.length() > size) {
                    cut = true;
                    break;
                }
                ByteBuffer record = ByteBuffer.allocate(LogRecord.HEADER + h.length());
                if (!seg.readFully(pos, record) || !LogRecord.verify(record.flip(), h)) {
                    cut = true;
                    break;
                }
                pending.add(new ExtentIndex.IndexedWrite(h.chunk(), h.offset(), h.length(), h.sequence(), seg.number(), pos));
                pos += record.capacity();
                replayed++;
                if (pending.size() >= REPLAY_BATCH) {
                    index.apply(pending, new LogPosition(seg.number(), pos));
                    pending.clear();
                }
            }
            if (!pending.isEmpty()) {
                index.apply(pending, new LogPosition(seg.number(), pos));
                pending.clear();
            }
            if (cut) {
                truncated += size - pos;
                LOG.warn("log segment {} ends in a torn or corrupt record at {}; cutting {} bytes", seg.number(), pos, size - pos);
                seg.truncate(pos);
                for (LogSegment later : segments.all()) {
                    if (later.number() > seg.number()) {
                        truncated += later.size();
                    }
                }
                segments.dropAfter(seg.number());
                index.apply(List.of(), new LogPosition(seg.number(), pos));
                break;
            }
        }
        if (replayed > 0 || truncated > 0) {
            LOG.info("log recovery: {} records replayed, {} bytes truncated", replayed, truncated);
        }
        return new RecoveryReport(replayed, truncated);
    }

    @Override
    public void close() throws IOException {
        committer.close();
        readers.shutdown();
        try {
            readers.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        index.close();
        segments.close();
    }
}
