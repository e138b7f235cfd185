package io.fastblock.storage.log;

import io.fastblock.storage.io.ByteRateLimiter;
import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reclaims log space in the background. While the log's utilisation (live / on-disk bytes) is
 * below the target, it takes the sealed segment with the fewest live bytes, copies the bytes the
 * index still reads from it into moved records (through the group committer, in batches of
 * {@link Settings#batchBytes}, so a foreground commit never waits long behind it), makes the
 * index durable and deletes the segment. Segments with no live bytes are deleted whenever seen.
 *
 * <p>Policy: cleaning a segment whose live ratio is {@code u} copies {@code u} bytes to free
 * {@code 1 - u}, and every copied byte is a log append, an index update and a read for the
 * commit thread. So the cleaner works to a lazy target ({@link Settings#targetUtilisation},
 * 0.5 by default: the log holds at most about twice its live bytes, and the segments it cleans
 * are mostly dead), as BookKeeper compacts entry logs only below 50% live. When the log's
 * filesystem runs short ({@link Settings#pressureFreeRatio} of it or less free) it cleans to
 * {@link Settings#pressureUtilisation} instead, paying more copying for the space. Measured on
 * 2 vCPUs (docs/performance.md): with the old fixed 0.85 target the cleaner's copies took about
 * a third of the servers' CPU per 4 KiB random overwrite.
 *
 * <p>Cleaning waits for quiet: while foreground writes reach the log at
 * {@link Settings#busyBytesPerSecond} or more, the cleaner works to half the target instead
 * ({@link Settings#busyUtilisation}: at the default the log may hold four times its live bytes
 * under sustained writes, twice once they pause), and a segment it is copying out is left for
 * later as soon as the writes start. Whatever it copies competes with those writes for the
 * commit thread and the disk, and a log cleaned at lower utilisation copies fewer bytes per byte
 * freed; the space this borrows is returned in the next pause, or at once when the filesystem
 * runs short (the pressure target does not wait).
 *
 * <p>Crash safety: a moved record is indexed only where the index still reads from its origin,
 * on the live path and on replay; the old segment is deleted only after the index that no longer
 * needs it is synced, and only if it lies before the index checkpoint (replay never reads it).
 * So a crash at any step leaves either the old copy indexed (and present) or the new one.
 *
 * <p>Pacing: at most {@link Settings#bytesPerSecond} moved, and after each batch the cleaner
 * sleeps so that its batches take at most {@link Settings#maxShare} of the commit thread's time.
 *
 * <p>Close the cleaner before its store. A segment holding a corrupt live record is left alone
 * (and retried after ten minutes), since its bytes cannot be copied until repair rewrites them.
 */
public final class LogCleaner implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LogCleaner.class);

    /**
     * @param targetUtilisation   clean while live / on-disk bytes is below this
     * @param maxSegmentLive      never clean a segment whose live ratio is above this (moving it frees too little)
     * @param bytesPerSecond      moved bytes per second, 0 for unlimited
     * @param maxShare            largest share (0..1] of the commit thread's time the cleaner's batches may take
     * @param batchBytes          moved bytes per commit batch
     * @param idleMillis          pause between passes when there is nothing to do
     * @param pressureUtilisation the target while the filesystem is short of space (at least {@code targetUtilisation})
     * @param pressureFreeRatio   the filesystem is short of space at or below this share of it free (0: never)
     * @param busyBytesPerSecond  foreground appends per second at which the cleaner works to {@link #busyUtilisation}
     *                            (0: never)
     */
    public record Settings(double targetUtilisation, double maxSegmentLive, long bytesPerSecond, double maxShare,
                           int batchBytes, long idleMillis, double pressureUtilisation, double pressureFreeRatio,
                           long busyBytesPerSecond) {
        /** The default lazy target: the log may hold about twice its live bytes before segments are copied. */
        public static final double DEFAULT_TARGET = 0.5;
        /**
         * Foreground writes that count as busy: 1 000 4 KiB writes a second reach 4 MiB/s, a tail
         * under a benchmark's random writes takes 20-25 MiB/s here; a trickle does not hold the cleaner.
         */
        public static final long DEFAULT_BUSY_BYTES_PER_SECOND = 4L << 20;
        public static final Settings DEFAULTS = new Settings(DEFAULT_TARGET, 0.95, 64L << 20, 0.5, 256 << 10, 1000, 0.85, 0.10,
                DEFAULT_BUSY_BYTES_PER_SECOND);

        public Settings {
            if (!(targetUtilisation > 0 && targetUtilisation <= 1) || !(maxSegmentLive > 0 && maxSegmentLive <= 1)) {
                throw new IllegalArgumentException("utilisation thresholds must be in (0, 1]");
            }
            if (!(maxShare > 0 && maxShare <= 1)) {
                throw new IllegalArgumentException("maxShare must be in (0, 1], got " + maxShare);
            }
            if (batchBytes < 4096 || idleMillis < 1) {
                throw new IllegalArgumentException("batchBytes must be >= 4096 and idleMillis >= 1");
            }
            if (!(pressureUtilisation >= targetUtilisation && pressureUtilisation <= 1)) {
                throw new IllegalArgumentException("the target under space pressure must be in [" + targetUtilisation
                        + ", 1], got " + pressureUtilisation);
            }
            if (!(pressureFreeRatio >= 0 && pressureFreeRatio < 1)) {
                throw new IllegalArgumentException("the free share that means space pressure must be in [0, 1), got "
                        + pressureFreeRatio);
            }
            if (busyBytesPerSecond < 0) {
                throw new IllegalArgumentException("the busy foreground rate must be 0 (never busy) or more, got "
                        + busyBytesPerSecond);
            }
        }

        /** The lazy target with the pressure target and the free share that means pressure; never busy. */
        public Settings(double targetUtilisation, double maxSegmentLive, long bytesPerSecond, double maxShare,
                        int batchBytes, long idleMillis, double pressureUtilisation, double pressureFreeRatio) {
            this(targetUtilisation, maxSegmentLive, bytesPerSecond, maxShare, batchBytes, idleMillis, pressureUtilisation,
                    pressureFreeRatio, 0);
        }

        /** The target while foreground writes are busy: half the lazy one. */
        public double busyUtilisation() {
            return targetUtilisation / 2;
        }

        /** One target whatever the free space (tests that want a fixed policy). */
        public Settings(double targetUtilisation, double maxSegmentLive, long bytesPerSecond, double maxShare,
                        int batchBytes, long idleMillis) {
            this(targetUtilisation, maxSegmentLive, bytesPerSecond, maxShare, batchBytes, idleMillis, targetUtilisation, 0, 0);
        }

        /** These settings with another lazy target; the target under pressure stays at least as high. */
        public Settings withTarget(double target) {
            if (!(target > 0 && target <= 1)) {
                throw new IllegalArgumentException("the cleaner's target utilisation must be in (0, 1], got " + target);
            }
            return new Settings(target, maxSegmentLive, bytesPerSecond, maxShare, batchBytes, idleMillis,
                    Math.max(target, pressureUtilisation), pressureFreeRatio, busyBytesPerSecond);
        }
    }

    /** The steps of cleaning one segment, for tests that stop the cleaner between them. */
    public enum Step { PIECES_FOUND, RECORDS_MOVED, INDEX_SYNCED, SEGMENT_DELETED }

    /** Called at each step; an exception thrown here aborts the pass (a test's stand-in for a crash). */
    public interface StepListener {
        void reached(Step step, long segment) throws IOException;
    }

    private final LogStore store;
    private final Settings settings;
    /** Usable / total bytes of the log's filesystem; a test stands in its own. */
    private final FreeSpace freeSpace;
    /** Foreground bytes appended per second; a test stands in its own. */
    private final ForegroundRate foreground;
    private volatile boolean pressed;
    private final ByteRateLimiter limiter;
    private volatile StepListener listener = (step, segment) -> { };
    private volatile boolean running;
    /** Segments whose live bytes could not be read (corrupt), with when to try again: repair first rewrites the bad bytes elsewhere. */
    private final java.util.Map<Long, Long> unmovable = new java.util.concurrent.ConcurrentHashMap<>();
    private static final long RETRY_UNMOVABLE_NANOS = TimeUnit.MINUTES.toNanos(10);
    private Thread thread;

    public LogCleaner(LogStore store) {
        this(store, Settings.DEFAULTS);
    }

    public LogCleaner(LogStore store, Settings settings) {
        this(store, settings, store::freeSpaceRatio);
    }

    /** The share of the log's filesystem that is free. */
    @FunctionalInterface
    interface FreeSpace {
        double ratio() throws IOException;
    }

    /** Bytes per second that foreground writes append to the log now. */
    @FunctionalInterface
    interface ForegroundRate {
        double bytesPerSecond();
    }

    LogCleaner(LogStore store, Settings settings, FreeSpace freeSpace) {
        this(store, settings, freeSpace, new AppendRate(store::foregroundBytes, System::nanoTime)::perSecond);
    }

    LogCleaner(LogStore store, Settings settings, FreeSpace freeSpace, ForegroundRate foreground) {
        this.store = store;
        this.settings = settings;
        this.freeSpace = freeSpace;
        this.foreground = foreground;
        this.limiter = new ByteRateLimiter(settings.bytesPerSecond());
    }

    public LogCleaner onStep(StepListener l) {
        this.listener = l;
        return this;
    }

    /** Starts the background thread. */
    public synchronized LogCleaner start() {
        if (thread == null) {
            running = true;
            thread = new Thread(this::loop, "log-cleaner");
            thread.setDaemon(true);
            thread.start();
        }
        return this;
    }

    private void loop() {
        while (running) {
            try {
                if (cleanOnce() == 0) {
                    TimeUnit.MILLISECONDS.sleep(settings.idleMillis());
                }
            } catch (InterruptedException e) {
                return;
            } catch (IOException | RuntimeException e) {
                if (!running) {
                    return;
                }
                LOG.warn("log cleaner pass failed; retrying later: {}", e.toString());
                try {
                    TimeUnit.MILLISECONDS.sleep(settings.idleMillis());
                } catch (InterruptedException ie) {
                    return;
                }
            }
        }
    }

    /**
     * One pass: deletes every sealed segment without live bytes, then, if utilisation is below
     * target, cleans the emptiest eligible segment. Returns the number of segments freed.
     */
    public int cleanOnce() throws IOException, InterruptedException {
        int freed = 0;
        List<LogSegment> sealed = new ArrayList<>(store.sealedSegments());
        long now = System.nanoTime();
        unmovable.values().removeIf(retryAt -> retryAt - now < 0);
        sealed.removeIf(s -> unmovable.containsKey(s.number()));
        LiveBytes live = store.liveBytes();
        for (LogSegment s : sealed) {
            if (live.of(s.number()) == 0 && clean(s.number())) {
                freed++;
            }
        }
        if (store.utilisation() >= target()) {
            return freed;
        }
        sealed.removeIf(s -> live.of(s.number()) == 0 || s.size() == 0
                || (double) live.of(s.number()) / s.size() > settings.maxSegmentLive());
        sealed.sort(Comparator.comparingDouble(s -> (double) live.of(s.number()) / Math.max(1, s.size())));
        for (LogSegment s : sealed) {
            if (clean(s.number())) {
                return freed + 1;
            }
            if (store.utilisation() >= target()) {
                return freed; // writes started (or space came back) while that segment was left
            }
        }
        return freed;
    }

    /**
     * The utilisation to clean to now: the lazy target, half of it while foreground writes are
     * busy, or the pressure target while space is short.
     */
    double target() throws IOException {
        boolean shortOfSpace = settings.pressureFreeRatio() > 0 && freeSpace.ratio() <= settings.pressureFreeRatio();
        if (shortOfSpace != pressed) {
            pressed = shortOfSpace;
            if (shortOfSpace) {
                LOG.warn("log filesystem at or below {}% free: cleaning the log to {}% live instead of {}%",
                        Math.round(settings.pressureFreeRatio() * 100), Math.round(settings.pressureUtilisation() * 100),
                        Math.round(settings.targetUtilisation() * 100));
            } else {
                LOG.info("log filesystem above {}% free again: cleaning the log to {}% live",
                        Math.round(settings.pressureFreeRatio() * 100), Math.round(settings.targetUtilisation() * 100));
            }
        }
        if (shortOfSpace) {
            return settings.pressureUtilisation();
        }
        return busy() ? settings.busyUtilisation() : settings.targetUtilisation();
    }

    private boolean busy() {
        return settings.busyBytesPerSecond() > 0 && foreground.bytesPerSecond() >= settings.busyBytesPerSecond();
    }

    /**
     * Moves the live bytes out of one segment and deletes it; false if it is left: something still
     * reads from it, or writes started and the log is above the target they allow.
     */
    boolean clean(long segment) throws IOException, InterruptedException {
        try {
            return cleanRounds(segment);
        } catch (CorruptRecordException e) {
            unmovable.put(segment, System.nanoTime() + RETRY_UNMOVABLE_NANOS);
            LOG.error("log segment {} holds a corrupt live record; not cleaning it: {}", segment, e.getMessage());
            return false;
        }
    }

    private boolean cleanRounds(long segment) throws IOException, InterruptedException {
        for (int round = 0; round < 3; round++) {
            List<LogStore.LivePiece> pieces = store.livePieces(segment, settings.batchBytes());
            listener.reached(Step.PIECES_FOUND, segment);
            if (pieces.isEmpty()) {
                store.syncIndex();
                listener.reached(Step.INDEX_SYNCED, segment);
                store.retire(segment);
                store.logMetrics().cleanerSegmentsFreed.increment();
                listener.reached(Step.SEGMENT_DELETED, segment);
                return true;
            }
            // Pieces come in segment order, so the pieces of one run follow each other: two runs suffice.
            LoadedRuns runs = new LoadedRuns(2);
            int i = 0;
            while (i < pieces.size()) {
                long batchStart = System.nanoTime();
                long bytes = 0;
                List<CompletableFuture<Void>> moved = new ArrayList<>();
                store.relocation.lock();
                try {
                    while (i < pieces.size() && (bytes == 0 || bytes + pieces.get(i).end() - pieces.get(i).start() <= settings.batchBytes())) {
                        LogStore.LivePiece p = pieces.get(i++);
                        ByteBuf data = store.readExtent(p.chunk(), p.extent(), p.start(), p.end(), runs);
                        bytes += data.readableBytes();
                        moved.add(store.move(p, data));
                    }
                    CompletableFuture.allOf(moved.toArray(CompletableFuture[]::new)).join();
                } catch (java.util.concurrent.CompletionException e) {
                    throw e.getCause() instanceof IOException io ? io : new IOException("moving live bytes failed", e.getCause());
                } finally {
                    store.relocation.unlock();
                }
                store.logMetrics().cleanerBytesMoved.increment(bytes);
                limiter.acquire(bytes);
                long took = System.nanoTime() - batchStart;
                long rest = (long) (took * (1 - settings.maxShare()) / settings.maxShare());
                if (rest > 0) {
                    TimeUnit.NANOSECONDS.sleep(rest);
                }
                if (!running && thread != null) {
                    throw new InterruptedException("cleaner stopped");
                }
                if (i < pieces.size() && store.utilisation() >= target()) {
                    // Writes started (or space came back): the rest of this segment waits for the next quiet
                    // spell. The pieces moved so far stay moved; the others are still read where they are.
                    store.logMetrics().cleanerYields.increment();
                    return false;
                }
            }
            listener.reached(Step.RECORDS_MOVED, segment);
        }
        LOG.warn("segment {} still holds live bytes after three cleaning rounds; leaving it", segment);
        return false;
    }

    @Override
    public void close() {
        Thread t;
        synchronized (this) {
            running = false;
            t = thread;
        }
        if (t != null) {
            t.interrupt();
            try {
                t.join(TimeUnit.SECONDS.toMillis(30));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
