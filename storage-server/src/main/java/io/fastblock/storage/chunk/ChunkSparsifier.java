package io.fastblock.storage.chunk;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.io.ByteRateLimiter;
import io.fastblock.storage.io.FileIo;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gives back the disk blocks of small trims. A trim inside a chunk file below the hole-punch
 * size is zero-written (one {@code fallocate} process per 4 KiB trim would cost more than the
 * space), so its blocks stay on disk. The store counts those bytes per chunk here; once a chunk
 * has enough of them and no trim came for a while, this rewrites its data file sparse: only the
 * allocated blocks (per the allocation map) are copied into {@code <chunk>.sparse} at the same
 * offsets, everything else stays a hole, then the copy replaces the file by an atomic rename.
 *
 * <p>Exclusion: every step runs on the chunk's stripe, between that chunk's reads and writes, in
 * pieces of {@link #PIECE_BYTES} so a large chunk does not hold its stripe for long. Writes and
 * trims that land between two pieces are seen by a {@link ChunkStore.WriteWatch} started with the
 * copy, and their ranges are copied again (or zeroed) in the last step, which swaps the files in
 * the same stripe task. A chunk deleted or reopened meanwhile ends the compaction (temp deleted).
 * Checksums and allocation map do not change: the bytes are the same.
 *
 * <p>Counts are not persisted: after a restart a chunk's zero-written bytes from before are only
 * reclaimed when later trims push it over the threshold again, or it is cut or deleted.
 */
final class ChunkSparsifier {
    private static final Logger LOG = LoggerFactory.getLogger(ChunkSparsifier.class);
    static final int PIECE_BYTES = 1 << 20;
    /** Below this a compaction is not worth a file rewrite. */
    static final long MIN_GARBAGE = 64 << 10;
    /** Above this (or {@link #SHARE} of the file) a chunk is compacted. */
    static final long ENOUGH_GARBAGE = 1 << 20;
    /**
     * Share of the file that makes a small chunk worth compacting: with 4 MiB chunks 1 MiB would
     * need a quarter of the chunk trimmed, so a 10% overwrite after a snapshot would never come back.
     */
    static final double SHARE = 0.05;
    /** A chunk still being trimmed waits this long so one rewrite takes all of a reclaimer's trims. */
    static final long QUIET_NANOS = TimeUnit.SECONDS.toNanos(2);
    private volatile long quietNanos = QUIET_NANOS;

    private static final class Garbage {
        long bytes;
        long lastTrimNanos;
    }

    private final ChunkStore store;
    private final Map<ChunkId, Garbage> garbage = new ConcurrentHashMap<>();
    private final ScheduledExecutorService worker;
    private volatile ByteRateLimiter pace = new ByteRateLimiter(0);
    private volatile long compacted;

    ChunkSparsifier(ChunkStore store) {
        this.store = store;
        this.worker = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "chunk-sparsify");
            t.setDaemon(true);
            return t;
        });
        worker.scheduleWithFixedDelay(this::scan, 1, 1, TimeUnit.SECONDS);
    }

    /** For tests: how long a chunk must go without trims before the background compacts it. */
    void quietFor(long nanos) {
        this.quietNanos = nanos;
    }

    void pacedBy(ByteRateLimiter limiter) {
        this.pace = limiter;
    }

    /** Called on the chunk's stripe by a trim that zero-wrote {@code bytes}. */
    void trimmed(ChunkId chunk, long bytes) {
        if (bytes <= 0) {
            return;
        }
        Garbage g = garbage.computeIfAbsent(chunk, c -> new Garbage());
        synchronized (g) {
            g.bytes += bytes;
            g.lastTrimNanos = System.nanoTime();
        }
    }

    /** The chunk's file is gone: nothing left to reclaim. */
    void forget(ChunkId chunk) {
        garbage.remove(chunk);
    }

    long garbageOf(ChunkId chunk) {
        Garbage g = garbage.get(chunk);
        if (g == null) {
            return 0;
        }
        synchronized (g) {
            return g.bytes;
        }
    }

    /** Number of compactions done since start. */
    long compactions() {
        return compacted;
    }

    private void scan() {
        long now = System.nanoTime();
        List<ChunkId> due = new ArrayList<>();
        garbage.forEach((c, g) -> {
            synchronized (g) {
                if (now - g.lastTrimNanos < quietNanos || g.bytes < MIN_GARBAGE) {
                    return;
                }
            }
            due.add(c);
        });
        for (ChunkId c : due) {
            try {
                long size = store.sizeOf(c);
                long g = garbageOf(c);
                if (g >= ENOUGH_GARBAGE || g >= SHARE * size) {
                    compact(c);
                }
            } catch (IOException | RuntimeException e) {
                LOG.warn("compaction of chunk {} failed (retried after its next trim): {}", c, e.toString());
            }
        }
    }

    /** What the first step hands the others. */
    private record Copy(ChunkFile file, ChunkStore.WriteWatch watch, FileIo temp, long blocks, long garbage) {
    }

    /**
     * Rewrites the chunk's data file sparse now (on the caller's thread, stripe steps in between).
     * Returns false if there was nothing to do or the chunk changed under it (deleted, resyncing).
     */
    synchronized boolean compact(ChunkId chunk) throws IOException {
        // One at a time: the background and an explicit call must not share a chunk's temp file.
        Path file = store.fileOf(chunk);
        Path tempPath = ChunkFile.sparseTempOf(file);
        Copy copy = store.onStripeNow(chunk, () -> {
            ChunkFile f = store.openChunk(chunk);
            if (f == null || store.isResyncing(chunk)) {
                garbage.remove(chunk);
                return null;
            }
            Garbage g = garbage.remove(chunk);
            long bytes = 0;
            if (g != null) {
                synchronized (g) {
                    bytes = g.bytes;
                }
            }
            store.files().delete(tempPath);
            FileIo t = store.files().open(tempPath, true);
            return new Copy(f, store.watch(chunk), t, f.blocks(), bytes);
        });
        if (copy == null) {
            return false;
        }
        boolean done = false;
        try {
            long step = PIECE_BYTES / ChunkFile.BLOCK;
            for (long b = 0; b < copy.blocks; b += step) {
                long first = b;
                Long copied = store.onStripeNow(chunk, () -> store.openChunk(chunk) != copy.file ? null
                        : copy.file.copyAllocated(copy.temp, first, step, false));
                if (copied == null) {
                    return false;
                }
                pace.acquire(copied);
            }
            done = store.onStripeNow(chunk, () -> {
                if (store.openChunk(chunk) != copy.file || store.isResyncing(chunk)) {
                    return false;
                }
                // Written or trimmed since its piece was copied: copy again, zeros where trimmed.
                for (long[] r : copy.watch.touchedRanges()) {
                    long first = r[0] / ChunkFile.BLOCK;
                    long last = (r[1] + ChunkFile.BLOCK - 1) / ChunkFile.BLOCK;
                    copy.file.copyAllocated(copy.temp, first, last - first, true);
                }
                copy.file.replaceData(copy.temp, store.files());
                return true;
            });
            if (done) {
                compacted++;
                LOG.debug("chunk {} rewritten sparse ({} bytes of zero-written trims given back)", chunk, copy.garbage);
            }
            return done;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("compaction of " + chunk + " interrupted", e);
        } finally {
            store.unwatch(copy.watch);
            if (!done) {
                try {
                    copy.temp.close();
                } catch (IOException ignored) {
                    // already closed by a failed swap
                }
                store.files().delete(tempPath);
                if (copy.garbage > 0) {
                    trimmed(chunk, copy.garbage); // still to reclaim
                }
            }
        }
    }

    void close() {
        worker.shutdownNow();
        try {
            worker.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
