package io.fastblock.storage.chunk;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.io.FileIoFactory;
import io.fastblock.storage.io.MappingBudget;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The in-place layout of head and middle replicas: one sparse file per chunk at
 * {@code chunks/<volumeId>/<chunkIndex>} with a CRC32C per 4 KiB block in {@code <chunkIndex>.crc}
 * (see {@link ChunkFile}), written positionally without fsync (the tail's log is the durable
 * copy). Holes and bytes past the end of a file read as zeros; every block read is checked.
 *
 * <p>Durability bookkeeping (DESIGN "Head/middle after power loss"): a chunk is recorded in
 * {@link DirtyChunks} before its first write after a checkpoint; every {@code flushInterval}
 * the store forces the dirty chunks and records the new checkpoint, with the highest sequence
 * forced per chunk; a chunk leaves the record once it was forced after a whole interval without
 * writes (so a chunk written steadily costs one record save, not one per interval). Close forces everything and records a clean shutdown. Opening after an
 * unclean shutdown rebuilds the checksums of every chunk that was dirty (data and sidecar may
 * be torn apart); if the machine rebooted since (power loss: the page cache is gone, which the
 * record's boot id tells) it also holds those chunks in resync: reads of them fail with
 * {@link ChunkResyncingException} until {@link #finishResync} is called by whoever brought them
 * back in line with the tail ({@code integrity.ChunkResync}).
 *
 * <p>All file work runs on this store's own threads, one stripe per chunk, never on a Netty
 * event loop; work on one chunk runs in submission order.
 */
public final class ChunkStore implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(ChunkStore.class);
    /** The two-argument constructor's interval (tests and tools); a server takes its own from {@code StorageServerConfig}. */
    public static final Duration DEFAULT_FLUSH_INTERVAL = Duration.ofSeconds(5);
    /** Group id of a write whose group the caller did not say (such a chunk cannot be resynced after a power loss). */
    public static final int UNKNOWN_GROUP = -1;
    /** The dirty record's end bound grows in these steps, so a chunk written sequentially costs few record saves. */
    static final long END_STEP = 16L << 20;

    /** A dirty chunk's bookkeeping; {@code writes} and {@code latestSequence} change on its stripe only. */
    private static final class Tracked {
        volatile int groupId;
        volatile long forcedSequence;
        volatile long writes;
        volatile long latestSequence;
        /** Recorded bound on the bytes written; raised (durably) in {@link #END_STEP} steps before a write passes it. */
        volatile long end;
        /** {@link #writes} at the previous checkpoint: a chunk leaves the record only after a whole idle interval. */
        volatile long writesAtLastFlush = -1;

        Tracked(int groupId, long forcedSequence, long end) {
            this.groupId = groupId;
            this.forcedSequence = forcedSequence;
            this.latestSequence = forcedSequence;
            this.end = end;
        }
    }

    /**
     * Byte ranges written to a chunk since the watch began. Data fetched from another replica
     * while the watch ran is older than these writes and must not be laid over them.
     */
    public static final class WriteWatch {
        private final ChunkId chunk;
        private final List<long[]> written = new ArrayList<>();

        private WriteWatch(ChunkId chunk) {
            this.chunk = chunk;
        }

        public ChunkId chunk() {
            return chunk;
        }

        private synchronized void add(long offset, long length) {
            written.add(new long[]{offset, offset + length});
        }

        private synchronized boolean touches(long from, long to) {
            for (long[] r : written) {
                if (r[0] < to && from < r[1]) {
                    return true;
                }
            }
            return false;
        }

        /** The ranges written or trimmed since the watch began, as {@code {from, to}}. */
        synchronized List<long[]> touchedRanges() {
            return List.copyOf(written);
        }

        /** {@code [from, to)} minus the written ranges, in order. */
        private synchronized List<long[]> untouched(long from, long to) {
            List<long[]> out = new ArrayList<>();
            out.add(new long[]{from, to});
            for (long[] w : written) {
                List<long[]> next = new ArrayList<>();
                for (long[] r : out) {
                    if (w[1] <= r[0] || r[1] <= w[0]) {
                        next.add(r);
                        continue;
                    }
                    if (r[0] < w[0]) {
                        next.add(new long[]{r[0], w[0]});
                    }
                    if (w[1] < r[1]) {
                        next.add(new long[]{w[1], r[1]});
                    }
                }
                out = next;
            }
            return out;
        }
    }

    private final Path root;
    private final FileIoFactory files;
    private final ConcurrentHashMap<ChunkId, ChunkFile> open = new ConcurrentHashMap<>();
    /** Bounds the checksums the open chunks hold in memory while written (see BlockSums). */
    private final SumMemory sumMemory = SumMemory.ofHeap();
    /**
     * Reads up to this size run on the caller's thread when their stripe is idle ({@link Stripe#tryHere}):
     * small reads gain most from skipping the thread switches; larger ones keep the stripes' parallelism
     * and do not hold a network thread for the copy.
     */
    static final int INLINE_READ_MAX = 128 * 1024;
    /**
     * Reads from this size up are answered with a view of the page cache where it holds the whole
     * range ({@link ChunkFile#readResident}): the network copies them to the socket straight from
     * the cache, one copy fewer. Smaller reads copy a few pages and would pay a {@code mincore} call
     * each; below this size it was not measured.
     */
    static final int RESIDENT_READ_MIN = 64 * 1024;
    /** Reads answered with a view of the page cache (tests). */
    final LongAdder residentReads = new LongAdder();
    /** How many chunk files those reads keep mapped at once. */
    private final MappingBudget mappings;
    /**
     * Writes up to this size run on the caller's thread when the chunk's stripe is idle and the write
     * needs no dirty-record save (an fsync, which must not hold a network thread). Measured on 2 vCPUs
     * with three servers, 4 KiB QD32 random writes: 16% more IOPS and 21% less server CPU per write
     * than handing every write to its stripe (docs/performance.md). A page-cache copy can still be
     * throttled by dirty-page writeback; the inline reads above share that risk.
     */
    static final int INLINE_WRITE_MAX = 128 * 1024;
    private final Stripe[] stripes;
    private final ScheduledExecutorService flusher;
    private final Duration flushInterval;
    private final DirtyChunks record;
    private final Object dirtyLock = new Object();
    private final Object flushLock = new Object();
    private final ConcurrentHashMap<ChunkId, Tracked> dirty = new ConcurrentHashMap<>();
    /**
     * The clean chunks' forced sequences, durably ({@code applied.0/1}): saved when chunks turn
     * clean and at a clean close, so a restarted node knows, per chunk, that it holds every write
     * of the chunk up to that sequence, and a returning member copies only what is newer.
     */
    private final DirtyChunks applied;
    /** Per chunk, the sequence this node held everything up to when the store opened (see {@link #sequenceAtOpen}). */
    private final java.util.Map<ChunkId, Long> sequencesAtOpen = new ConcurrentHashMap<>();
    /** The highest sequence forced for chunks that are clean now, to seed their next dirty entry. */
    private final ConcurrentHashMap<ChunkId, Long> forced = new ConcurrentHashMap<>();
    /**
     * Writes applied here as head or middle that the tail has not confirmed yet, per chunk. A
     * chunk with any turns clean only once they are confirmed: its recorded sequence must not
     * claim writes the tail may lack (a delta catch-up would keep them).
     */
    private final ConcurrentHashMap<ChunkId, java.util.concurrent.atomic.AtomicInteger> unconfirmed = new ConcurrentHashMap<>();
    /**
     * Chunks holding a write applied here that never reached the tail (its forward failed or
     * expired, or this node left the chain first): no sequence is recorded for them for the rest
     * of this run, so a returning member copies them whole.
     */
    private final java.util.Set<ChunkId> diverged = ConcurrentHashMap.newKeySet();
    /** The group each chunk was last written for (from writes since start and the dirty record), for repair and scrub. */
    private final ConcurrentHashMap<ChunkId, Integer> groupOf = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<ChunkId, WriteWatch> resyncing = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<ChunkId, CompletableFuture<Void>> resynced = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<ChunkId, List<WriteWatch>> watches = new ConcurrentHashMap<>();
    private final List<DirtyChunks.Entry> toResync;
    private final ChunkSparsifier sparsifier;
    private volatile boolean closed;

    /** The chunk files mapped for large reads, and their limit. */
    public MappingBudget mappings() {
        return mappings;
    }

    /** How often dirty chunks are forced and the checkpoint recorded. */
    public Duration flushInterval() {
        return flushInterval;
    }

    public ChunkStore(Path dataDir, int ioThreads) throws IOException {
        this(dataDir, ioThreads, FileIoFactory.real(), DEFAULT_FLUSH_INTERVAL);
    }

    /**
     * A store whose files are opened through {@code files} (a fault-injecting factory in
     * power-loss tests), forcing dirty chunks every {@code flushInterval}.
     */
    public ChunkStore(Path dataDir, int ioThreads, FileIoFactory files, Duration flushInterval) throws IOException {
        this(dataDir, ioThreads, files, flushInterval, MappingBudget.defaultLimit());
    }

    /** As above, keeping at most {@code mappedChunks} chunk files mapped for large reads (0: none). */
    public ChunkStore(Path dataDir, int ioThreads, FileIoFactory files, Duration flushInterval, int mappedChunks)
            throws IOException {
        this.mappings = new MappingBudget(mappedChunks);
        this.root = dataDir.resolve("chunks");
        this.files = files;
        boolean fresh = !Files.exists(root);
        Files.createDirectories(root);
        if (fresh) {
            files.syncDirectory(dataDir);
        }
        removeSparseTemps();
        this.record = DirtyChunks.open(root, files);
        DirtyChunks sequences = null;
        try {
            DirtyChunks.State last = record.lastState();
            sequences = DirtyChunks.open(root, files, "applied");
            loadSequences(last, sequences.lastState());
            this.toResync = recover(last);
        } catch (IOException | RuntimeException e) {
            closeOpenFiles();
            record.close();
            if (sequences != null) {
                sequences.close();
            }
            throw e;
        }
        this.applied = sequences;
        AtomicInteger n = new AtomicInteger();
        this.stripes = new Stripe[ioThreads];
        for (int i = 0; i < ioThreads; i++) {
            stripes[i] = new Stripe("chunk-io-" + n.incrementAndGet());
        }
        this.flusher = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "chunk-flush");
            t.setDaemon(true);
            return t;
        });
        this.sparsifier = new ChunkSparsifier(this);
        this.flushInterval = flushInterval;
        long ms = Math.max(1, flushInterval.toMillis());
        flusher.scheduleWithFixedDelay(() -> {
            try {
                flush();
            } catch (IOException | RuntimeException e) {
                LOG.warn("periodic chunk flush failed: {}", e.toString());
            }
        }, ms, ms, TimeUnit.MILLISECONDS);
    }

    /**
     * Seeds the clean chunks' sequences from the applied record. A chunk that was dirty at an
     * unclean stop is left out (what it holds is not known by sequence: it resyncs or is copied
     * whole), and so is a chunk whose file is gone.
     */
    private void loadSequences(DirtyChunks.State last, DirtyChunks.State sequences) {
        java.util.Set<ChunkId> unsure = new java.util.HashSet<>();
        if (!last.clean()) {
            for (DirtyChunks.Entry e : last.dirty()) {
                unsure.add(e.chunk());
            }
        }
        for (DirtyChunks.Entry e : sequences.dirty()) {
            if (e.forcedSequence() > 0 && !unsure.contains(e.chunk()) && Files.exists(fileOf(e.chunk()))) {
                forced.put(e.chunk(), e.forcedSequence());
                sequencesAtOpen.put(e.chunk(), e.forcedSequence());
                if (e.groupId() != UNKNOWN_GROUP) {
                    groupOf.put(e.chunk(), e.groupId());
                }
            }
        }
    }

    /**
     * The sequence up to which this node held every write of {@code chunk} when the store opened
     * (it was clean then), or 0 if unknown. A joining node asks its tail only for what changed
     * above it. Writes applied since carry on from there (a joining node applies its forwarded
     * writes with sequence 0, so a catch-up cut short never records more than it copied).
     */
    public long sequenceAtOpen(ChunkId chunk) {
        return sequencesAtOpen.getOrDefault(chunk, 0L);
    }

    private List<DirtyChunks.Entry> cleanEntries() {
        List<DirtyChunks.Entry> out = new ArrayList<>();
        forced.forEach((c, seq) -> {
            if (!diverged.contains(c) && !hasUnconfirmed(c)) {
                out.add(new DirtyChunks.Entry(c, groupOf.getOrDefault(c, UNKNOWN_GROUP), seq, 0));
            }
        });
        return out;
    }

    private boolean hasUnconfirmed(ChunkId chunk) {
        java.util.concurrent.atomic.AtomicInteger n = unconfirmed.get(chunk);
        return n != null && n.get() > 0;
    }

    /**
     * A write to {@code chunk} was (or is about to be) applied here ahead of the tail: until
     * {@link #confirmed} the chunk cannot turn clean, so no sequence covering it is recorded.
     */
    public void unconfirmedWrite(ChunkId chunk) {
        unconfirmed.computeIfAbsent(chunk, c -> new java.util.concurrent.atomic.AtomicInteger()).incrementAndGet();
    }

    /**
     * The tail's answer for a write announced by {@link #unconfirmedWrite}: {@code reached} if the
     * tail has it. If not, this copy may hold bytes the tail never had: the chunk's recorded
     * sequence is dropped durably (before this returns) and none is recorded for it again in this
     * run, so a returning member copies it whole instead of trusting a delta.
     */
    public void confirmed(ChunkId chunk, boolean reached) {
        if (!reached && diverge(chunk)) {
            LOG.info("chunk {}: a write applied here did not reach the tail; it will be copied whole on return", chunk);
        }
        unconfirmed.computeIfPresent(chunk, (c, n) -> n.decrementAndGet() <= 0 ? null : n);
    }

    /**
     * This copy may differ from the tail's: the chunk's recorded sequence is dropped durably and
     * none is recorded for it again in this run, so a returning member copies it whole. False if
     * it was already so.
     */
    private boolean diverge(ChunkId chunk) {
        if (!diverged.add(chunk)) {
            return false;
        }
        synchronized (dirtyLock) {
            forced.remove(chunk);
            sequencesAtOpen.remove(chunk);
            try {
                if (!closed) {
                    applied.save(true, cleanEntries());
                }
            } catch (IOException | RuntimeException e) {
                LOG.warn("chunk {}: could not drop its recorded sequence: {}", chunk, e.toString());
            }
        }
        return true;
    }

    /** After an unclean shutdown: rebuild the checksums of the chunks that were dirty and hold them for resync. */
    private List<DirtyChunks.Entry> recover(DirtyChunks.State last) throws IOException {
        List<DirtyChunks.Entry> pending = new ArrayList<>();
        boolean sameBoot = !last.bootId().isEmpty() && last.bootId().equals(record.bootId());
        if (!last.clean() && sameBoot) {
            // A process crash: the page cache kept every completed write, so the data is what was
            // written; only a checksum update cut off between data and sidecar may be missing.
            for (DirtyChunks.Entry e : last.dirty()) {
                ChunkFile f = file(e.chunk(), false);
                if (f != null) {
                    f.rebuildChecksums();
                }
                dirty.put(e.chunk(), new Tracked(e.groupId(), e.forcedSequence(), e.end()));
                if (e.groupId() != UNKNOWN_GROUP) {
                    groupOf.put(e.chunk(), e.groupId());
                }
            }
            LOG.warn("chunk store: process crash in this boot; checksums of {} dirty chunk(s) rebuilt, no resync needed",
                    last.dirty().size());
        } else if (!last.clean()) {
            for (DirtyChunks.Entry e : last.dirty()) {
                ChunkFile f = file(e.chunk(), false);
                if (f != null) {
                    f.rebuildChecksums();
                    f.force();
                }
                dirty.put(e.chunk(), new Tracked(e.groupId(), e.forcedSequence(), e.end()));
                if (e.groupId() != UNKNOWN_GROUP) {
                    groupOf.put(e.chunk(), e.groupId());
                }
                // Held even without a known group: the resync may learn it elsewhere, or release the chunk.
                resyncing.put(e.chunk(), new WriteWatch(e.chunk()));
                resynced.put(e.chunk(), new CompletableFuture<>());
                pending.add(e);
            }
            LOG.warn("chunk store: unclean shutdown, {} chunk(s) were written since the last checkpoint and must resync from their tails",
                    pending.size());
        }
        record.save(false, entries());
        return List.copyOf(pending);
    }

    private List<DirtyChunks.Entry> entries() {
        List<DirtyChunks.Entry> out = new ArrayList<>();
        dirty.forEach((c, t) -> out.add(new DirtyChunks.Entry(c, t.groupId, t.forcedSequence, t.end)));
        return out;
    }

    /** Chunks found dirty after an unclean shutdown, with their group and forced sequence (empty after a clean one). */
    public List<DirtyChunks.Entry> pendingResync() {
        List<DirtyChunks.Entry> out = new ArrayList<>();
        for (DirtyChunks.Entry e : toResync) {
            if (resyncing.containsKey(e.chunk())) {
                out.add(e);
            }
        }
        return out;
    }

    /**
     * The group the chunk was last written for since this store opened (or recorded dirty
     * before), or {@link #UNKNOWN_GROUP}. Chunks untouched since a restart are unknown here.
     */
    public int groupOf(ChunkId chunk) {
        return groupOf.getOrDefault(chunk, UNKNOWN_GROUP);
    }

    /** Completes when the chunk is out of resync (at once if it is not in resync). */
    public CompletableFuture<Void> whenResynced(ChunkId chunk) {
        CompletableFuture<Void> f = resynced.get(chunk);
        return f == null || !resyncing.containsKey(chunk) ? CompletableFuture.completedFuture(null) : f;
    }

    public boolean isResyncing(ChunkId chunk) {
        return resyncing.containsKey(chunk);
    }

    private Stripe stripe(ChunkId chunk) {
        return stripes[Math.floorMod(chunk.hashCode(), stripes.length)];
    }

    /**
     * Deletes compaction copies a crash left behind: the rename never happened, so the chunk's
     * own file is the old, complete one (see {@link ChunkSparsifier}).
     */
    private void removeSparseTemps() throws IOException {
        try (Stream<Path> vols = Files.list(root)) {
            for (Path v : (Iterable<Path>) vols::iterator) {
                if (!Files.isDirectory(v)) {
                    continue;
                }
                boolean removed = false;
                try (Stream<Path> cs = Files.list(v)) {
                    for (Path c : (Iterable<Path>) cs::iterator) {
                        if (c.getFileName().toString().endsWith(".sparse")) {
                            files.delete(c);
                            removed = true;
                        }
                    }
                }
                if (removed) {
                    files.syncDirectory(v);
                    LOG.info("chunk store: removed compaction copies left by a crash in {}", v);
                }
            }
        }
    }

    /** Paces chunk compaction (the rewrite of a chunk file sparse after small trims) to {@code limiter}. */
    public void compactionPacedBy(io.fastblock.storage.io.ByteRateLimiter limiter) {
        sparsifier.pacedBy(limiter);
    }

    /** Rewrites the chunk's file sparse now (tests, admin); false if it has no file or changed meanwhile. */
    public boolean compactNow(ChunkId chunk) throws IOException {
        return sparsifier.compact(chunk);
    }

    /** Bytes of the chunk trimmed by zero-writing since its last compaction (still on disk). */
    public long trimmedButAllocated(ChunkId chunk) {
        return sparsifier.garbageOf(chunk);
    }

    ChunkSparsifier sparsifier() {
        return sparsifier;
    }

    FileIoFactory files() {
        return files;
    }

    /** The chunk's open file, or null; call on the chunk's stripe. */
    ChunkFile openChunk(ChunkId chunk) throws IOException {
        return file(chunk, false);
    }

    /** Runs {@code work} on the chunk's stripe and waits for it; never from a stripe thread. */
    <T> T onStripeNow(ChunkId chunk, Callable<T> work) throws IOException {
        return await(onStripe(chunk, work));
    }

    private <T> CompletableFuture<T> onStripe(ChunkId chunk, Callable<T> work) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return work.call();
            } catch (Exception e) {
                throw uncheck(e);
            }
        }, stripe(chunk));
    }

    /** How stripe work's failures travel in its future: I/O errors as UncheckedIOException. */
    static RuntimeException uncheck(Exception e) {
        if (e instanceof IOException io) {
            return new UncheckedIOException(io);
        }
        return e instanceof RuntimeException r ? r : new CompletionException(e);
    }

    public Path fileOf(ChunkId chunk) {
        return root.resolve(Long.toString(chunk.volumeId())).resolve(Long.toString(chunk.index()));
    }

    /** Writes {@code data} at {@code offset}; takes ownership of {@code data}. The chunk's group is not known. */
    public CompletableFuture<Void> writeAsync(ChunkId chunk, long offset, ByteBuf data) {
        return writeAsync(UNKNOWN_GROUP, 0, chunk, offset, data);
    }

    /**
     * Writes {@code data} at {@code offset} as the write with {@code sequence} of group
     * {@code groupId} (the group lets a resync after power loss find the tail, the sequence
     * bounds what it fetches); takes ownership of {@code data}.
     */
    public CompletableFuture<Void> writeAsync(int groupId, long sequence, ChunkId chunk, long offset, ByteBuf data) {
        Callable<Void> write = () -> {
            try {
                write(groupId, sequence, chunk, offset, data);
                return null;
            } finally {
                data.release();
            }
        };
        int length = data.readableBytes();
        if (length <= INLINE_WRITE_MAX && writesWithoutRecord(chunk, groupId, offset + length)) {
            // The stripe idle: write on the caller's (network) thread, in the order the stripe would.
            CompletableFuture<Void> done = stripe(chunk).tryHere(write);
            if (done != null) {
                return done;
            }
        }
        try {
            return onStripe(chunk, write);
        } catch (RuntimeException rejected) {
            data.release();
            return CompletableFuture.failedFuture(rejected);
        }
    }

    private void write(int groupId, long sequence, ChunkId chunk, long offset, ByteBuf data) throws IOException {
        if (groupId != UNKNOWN_GROUP) {
            groupOf.put(chunk, groupId);
        }
        int length = data.readableBytes();
        Tracked t = markDirty(chunk, groupId, offset + length);
        ChunkFile f = file(chunk, true);
        f.write(offset, data.nioBuffers(data.readerIndex(), length));
        t.writes++;
        if (sequence > t.latestSequence) {
            t.latestSequence = sequence;
        }
        noteWritten(chunk, offset, length);
    }

    /**
     * Gives back {@code [offset, offset + length)} (block-aligned) as the write with
     * {@code sequence} of group {@code groupId}: afterwards it reads as zeros and is not allocated
     * (see {@link ChunkFile#trim}). With {@code whole} the chunk leaves the store entirely: its
     * data, checksum and allocation files are deleted. Ordered with the chunk's writes.
     */
    public CompletableFuture<Void> trimAsync(int groupId, long sequence, ChunkId chunk, long offset, long length,
                                             boolean whole) {
        return onStripe(chunk, () -> {
            trim(groupId, sequence, chunk, offset, length, whole);
            return null;
        });
    }

    private void trim(int groupId, long sequence, ChunkId chunk, long offset, long length, boolean whole) throws IOException {
        if (groupId != UNKNOWN_GROUP) {
            groupOf.put(chunk, groupId);
        }
        ChunkFile f = file(chunk, false);
        Tracked t = markDirty(chunk, groupId, 0);
        if (f != null) {
            if (whole) {
                delete(chunk);
            } else {
                sparsifier.trimmed(chunk, f.trim(offset, length));
            }
        }
        t.writes++;
        if (sequence > t.latestSequence) {
            t.latestSequence = sequence;
        }
        // A range trimmed during a resync or repair is newer than anything fetched meanwhile.
        noteWritten(chunk, offset, length);
    }

    /** Deletes the chunk's files (on its stripe); the name's removal is made durable before this returns. */
    private void delete(ChunkId chunk) throws IOException {
        sparsifier.forget(chunk);
        ChunkFile f = open.remove(chunk);
        if (f != null) {
            f.close();
        }
        Path file = fileOf(chunk);
        files.delete(ChunkFile.mapOf(file));
        files.delete(ChunkFile.sidecarOf(file));
        files.delete(file);
        files.syncDirectory(file.getParent());
    }

    /** The allocated ranges of {@code [offset, offset + length)} of the chunk (empty without a file). */
    public CompletableFuture<io.fastblock.protocol.Extents> extentsAsync(ChunkId chunk, long offset, long length) {
        return onStripe(chunk, () -> extentsNow(chunk, offset, length));
    }

    /** As {@link #extentsAsync}, synchronously; never call it from work already on a chunk stripe. */
    public io.fastblock.protocol.Extents extents(ChunkId chunk, long offset, long length) throws IOException {
        return await(extentsAsync(chunk, offset, length));
    }

    private io.fastblock.protocol.Extents extentsNow(ChunkId chunk, long offset, long length) throws IOException {
        ChunkFile f = file(chunk, false);
        return f == null ? io.fastblock.protocol.Extents.NONE : f.extents(offset, length);
    }

    /**
     * Sets the allocation of {@code [offset, offset + length)} of a chunk in resync to what the tail
     * reported, except where the chunk was written or trimmed since the resync began.
     */
    public CompletableFuture<Void> resyncAllocationAsync(ChunkId chunk, long offset, long length,
                                                         io.fastblock.protocol.Extents tailExtents) {
        return onStripe(chunk, () -> {
            WriteWatch w = resyncing.get(chunk);
            if (w == null) {
                throw new IllegalStateException("chunk " + chunk + " is not resyncing");
            }
            ChunkFile f = file(chunk, !tailExtents.isEmpty());
            if (f != null) {
                setAllocation(f, offset, length, tailExtents, w);
            }
            return null;
        });
    }

    /**
     * Makes the allocation of whole blocks in {@code [offset, offset + length)} match
     * {@code source}, leaving alone every block {@code watch} saw written or trimmed (newer).
     */
    private static void setAllocation(ChunkFile f, long offset, long length, io.fastblock.protocol.Extents source,
                                      WriteWatch watch) throws IOException {
        int block = ChunkFile.BLOCK;
        long from = offset / block * block;
        long end = (offset + length + block - 1) / block * block;
        List<long[]> runs = new ArrayList<>(); // {start, end, allocated}
        long at = from;
        for (io.fastblock.protocol.Extents.Range r : source.ranges()) {
            long a = Math.max(from, r.offset() / block * block);
            long b = Math.min(end, (r.end() + block - 1) / block * block);
            if (b <= a) {
                continue;
            }
            if (a > at) {
                runs.add(new long[]{at, a, 0});
            }
            runs.add(new long[]{Math.max(a, at), b, 1});
            at = Math.max(at, b);
        }
        if (at < end) {
            runs.add(new long[]{at, end, 0});
        }
        for (long[] run : runs) {
            for (long[] piece : watch.untouched(run[0], run[1])) {
                // Partly touched blocks were written meanwhile: they stay as that write left them.
                long a = (piece[0] + block - 1) / block * block;
                long b = piece[1] / block * block;
                if (b > a) {
                    f.allocate(a, b - a, run[2] == 1);
                }
            }
        }
    }

    private void noteWritten(ChunkId chunk, long offset, long length) {
        WriteWatch r = resyncing.get(chunk);
        if (r != null) {
            r.add(offset, length);
        }
        List<WriteWatch> ws = watches.get(chunk);
        if (ws != null) {
            synchronized (ws) {
                for (WriteWatch w : ws) {
                    w.add(offset, length);
                }
            }
        }
    }

    /** Records the chunk as dirty, durably, before its first write since the last checkpoint. */
    private Tracked markDirty(ChunkId chunk, int groupId, long writeEnd) throws IOException {
        Tracked t = dirty.get(chunk);
        if (t != null && (groupId == UNKNOWN_GROUP || t.groupId == groupId) && writeEnd <= t.end) {
            return t;
        }
        long bound = Math.max(writeEnd, (writeEnd + END_STEP - 1) / END_STEP * END_STEP);
        synchronized (dirtyLock) {
            t = dirty.get(chunk);
            if (t == null) {
                ChunkFile f = open.get(chunk);
                t = new Tracked(groupId, forced.getOrDefault(chunk, 0L), Math.max(bound, f == null ? 0 : f.size()));
                dirty.put(chunk, t);
            } else if ((groupId != UNKNOWN_GROUP && t.groupId != groupId) || writeEnd > t.end) {
                if (groupId != UNKNOWN_GROUP) {
                    t.groupId = groupId;
                }
                t.end = Math.max(t.end, bound);
            } else {
                return t;
            }
            record.save(false, entries());
            return t;
        }
    }

    /**
     * Whether a write ending at {@code writeEnd} finds the chunk open and already recorded dirty for
     * its group up to that end, so {@link #markDirty} saves no record. Checked without the stripe's
     * turn: a flush that turns the chunk clean in between (only after a whole idle interval) costs that
     * one write its record save where it runs, nothing else.
     */
    boolean writesWithoutRecord(ChunkId chunk, int groupId, long writeEnd) {
        Tracked t = dirty.get(chunk);
        return t != null && (groupId == UNKNOWN_GROUP || t.groupId == groupId) && writeEnd <= t.end && open.containsKey(chunk);
    }

    /** Whether the chunk's stripe has nothing queued or running (tests). */
    boolean stripeIdle(ChunkId chunk) {
        return stripe(chunk).idle();
    }

    /**
     * Reads {@code length} bytes for a client; the caller owns the returned buffer and must not write
     * into it: for a large read of cached pages it is a read-only view of the page cache, which shows
     * later writes (send it on, do not keep it). Fails with {@link CorruptBlockException} or {@link ChunkResyncingException}.
     */
    public CompletableFuture<ByteBuf> readAsync(ChunkId chunk, long offset, int length, ByteBufAllocator alloc) {
        Callable<ByteBuf> read = () -> readNow(chunk, offset, length, alloc);
        if (length <= INLINE_READ_MAX) {
            // The stripe idle: read on the caller's (network) thread, in the order the stripe would.
            CompletableFuture<ByteBuf> done = stripe(chunk).tryHere(read);
            if (done != null) {
                return done;
            }
        }
        return onStripe(chunk, read);
    }

    /**
     * Synchronous read of the file as it is, for the log's base files (the log reads a chunk's
     * base under its own index, also while the chunk resyncs, and a tail resyncing its in-place
     * copy from its log reads through here). Checksums are checked; the resync gate is not.
     * Runs on the chunk's stripe, so it never sees a write half applied; never call it from work
     * already running on a chunk stripe.
     */
    public ByteBuf read(ChunkId chunk, long offset, int length, ByteBufAllocator alloc) throws IOException {
        return await(onStripe(chunk, () -> readFile(chunk, offset, length, alloc, false)));
    }

    /** Forces the chunk's data and checksums now (e.g. a base file the log folded data into). */
    public void force(ChunkId chunk) throws IOException {
        await(onStripe(chunk, () -> {
            ChunkFile f = file(chunk, false);
            if (f != null) {
                f.force();
            }
            return null;
        }));
    }

    private static <T> T await(CompletableFuture<T> f) throws IOException {
        try {
            return f.join();
        } catch (CompletionException e) {
            Throwable c = e.getCause();
            if (c instanceof UncheckedIOException u) {
                throw u.getCause();
            }
            if (c instanceof IOException io) {
                throw io;
            }
            throw new IOException(String.valueOf(c), c);
        }
    }

    private ByteBuf readNow(ChunkId chunk, long offset, int length, ByteBufAllocator alloc) throws IOException {
        if (resyncing.containsKey(chunk)) {
            throw new ChunkResyncingException(chunk);
        }
        return readFile(chunk, offset, length, alloc, true);
    }

    /**
     * {@code mayView}: a read at least {@link #RESIDENT_READ_MIN} long may be answered with a read-only
     * view of the page cache, which shows writes made after the read. Only reads whose bytes go
     * straight out to a client may take one (a read concurrent with a write may see either); the
     * node's own readers (the log's base files, repairs) get a copy made in the stripe's turn.
     */
    private ByteBuf readFile(ChunkId chunk, long offset, int length, ByteBufAllocator alloc, boolean mayView) throws IOException {
        ChunkFile f = file(chunk, false);
        if (f != null && mayView && length >= RESIDENT_READ_MIN) {
            ByteBuf cached = f.readResident(offset, length, mappings);
            if (cached != null) {
                residentReads.increment();
                return cached;
            }
        }
        ByteBuf out = alloc.directBuffer(length, length);
        try {
            if (f == null) {
                // Pooled buffers hold old bytes: a chunk never written must be zeros explicitly.
                out.setZero(0, length);
            } else {
                f.read(offset, length, out.nioBuffer(0, length));
            }
            out.writerIndex(length);
            return out;
        } catch (IOException | RuntimeException e) {
            out.release();
            throw e;
        }
    }

    /** Starts collecting the ranges written to {@code chunk}; pass the watch to {@link #repairAsync}. */
    public WriteWatch watch(ChunkId chunk) {
        WriteWatch w = new WriteWatch(chunk);
        List<WriteWatch> ws = watches.computeIfAbsent(chunk, c -> new ArrayList<>());
        synchronized (ws) {
            ws.add(w);
        }
        return w;
    }

    void unwatch(WriteWatch w) {
        List<WriteWatch> ws = watches.get(w.chunk);
        if (ws != null) {
            synchronized (ws) {
                ws.remove(w);
            }
        }
    }

    /**
     * Repairs bad blocks with {@code good}, block-aligned data fetched from another replica since
     * {@code watch} began. Only blocks that still fail their check and were not written since the
     * watch began are rewritten (and forced): a block written meanwhile holds newer data than the
     * fetched copy. Returns the bytes repaired. Does not take ownership of {@code good}.
     */
    public CompletableFuture<Long> repairAsync(WriteWatch watch, long offset, ByteBuf good) {
        if (offset % ChunkFile.BLOCK != 0 || good.readableBytes() % ChunkFile.BLOCK != 0) {
            unwatch(watch);
            return CompletableFuture.failedFuture(new IllegalArgumentException("repair of " + offset + "+"
                    + good.readableBytes() + " is not block-aligned"));
        }
        ChunkId chunk = watch.chunk;
        return onStripe(chunk, () -> {
            try {
                ChunkFile f = file(chunk, false);
                if (f == null) {
                    return 0L;
                }
                long repaired = 0;
                int blocks = good.readableBytes() / ChunkFile.BLOCK;
                for (int i = 0; i < blocks; i++) {
                    long at = offset + (long) i * ChunkFile.BLOCK;
                    if (watch.touches(at, at + ChunkFile.BLOCK) || f.verify(at / ChunkFile.BLOCK, 1, files).isEmpty()) {
                        continue;
                    }
                    f.write(at, new ByteBuffer[]{good.nioBuffer(good.readerIndex() + i * ChunkFile.BLOCK, ChunkFile.BLOCK)},
                            false);
                    // Other watchers (a compaction copying this chunk) must see the repaired block change.
                    noteWritten(chunk, at, ChunkFile.BLOCK);
                    repaired += ChunkFile.BLOCK;
                }
                if (repaired > 0) {
                    f.force();
                }
                return repaired;
            } finally {
                unwatch(watch);
            }
        });
    }

    /**
     * Lays {@code data}, fetched from the tail for a chunk in resync, at {@code offset}, except
     * where the chunk was written since the resync began. Does not take ownership of {@code data}.
     */
    public CompletableFuture<Void> resyncWriteAsync(ChunkId chunk, long offset, ByteBuf data) {
        return onStripe(chunk, () -> {
            WriteWatch w = resyncing.get(chunk);
            if (w == null) {
                throw new IllegalStateException("chunk " + chunk + " is not resyncing");
            }
            ChunkFile f = file(chunk, true);
            for (long[] r : w.untouched(offset, offset + data.readableBytes())) {
                int from = data.readerIndex() + (int) (r[0] - offset);
                ByteBuffer piece = data.nioBuffer(from, (int) (r[1] - r[0]));
                if (r[0] >= f.size() && isZero(piece)) {
                    continue; // past the end the file reads as zeros already: keep it sparse
                }
                f.write(r[0], new ByteBuffer[]{piece});
            }
            return null;
        });
    }

    private static boolean isZero(ByteBuffer b) {
        for (int i = b.position(); i < b.limit(); i++) {
            if (b.get(i) != 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * A write applied here failed (a full disk, an I/O error) while the chain went on with it: this
     * copy may now miss a write the client was told is done, so the chunk is held as after a power
     * loss. Its reads fail with {@link ChunkResyncingException} (the repairing reads answer them
     * from the tail), it stays in the dirty record (a restart resyncs it too), and the returned
     * entry, with no forced sequence (so the whole chunk is copied), is what the resync takes. Null
     * if the chunk is already held.
     */
    public DirtyChunks.Entry holdForResync(ChunkId chunk, int groupId) {
        synchronized (dirtyLock) {
            if (resyncing.containsKey(chunk)) {
                return null;
            }
            Tracked t = dirty.get(chunk);
            if (t == null) {
                ChunkFile f = open.get(chunk);
                long size = 0;
                try {
                    size = f == null ? 0 : f.size();
                } catch (IOException ignored) {
                    // the recorded bound only limits a copy from the local log; the tail's length rules
                }
                t = new Tracked(groupId, 0, size);
                dirty.put(chunk, t);
            }
            if (groupId != UNKNOWN_GROUP) {
                t.groupId = groupId;
                groupOf.put(chunk, groupId);
            }
            t.forcedSequence = 0;
            diverge(chunk);
            resyncing.put(chunk, new WriteWatch(chunk));
            resynced.put(chunk, new CompletableFuture<>());
            try {
                record.save(false, entries());
            } catch (IOException | RuntimeException e) {
                LOG.warn("chunk {}: held for resync, but the dirty record was not saved: {}", chunk, e.toString());
            }
            LOG.warn("chunk {}: a write applied here failed; reads go to the tail until the chunk is resynced from it", chunk);
            return new DirtyChunks.Entry(chunk, t.groupId, 0, t.end);
        }
    }

    /** Ends a chunk's resync: forces it and lets reads of it through again. */
    public CompletableFuture<Void> finishResync(ChunkId chunk) {
        return onStripe(chunk, () -> {
            ChunkFile f = file(chunk, false);
            if (f != null) {
                f.force();
            }
            resyncing.remove(chunk);
            CompletableFuture<Void> done = resynced.remove(chunk);
            if (done != null) {
                done.complete(null);
            }
            return null;
        });
    }

    /** Checks blocks {@code [firstBlock, firstBlock+count)}; a chunk in resync or without a file reports nothing. */
    public CompletableFuture<List<BlockRange>> verifyAsync(ChunkId chunk, long firstBlock, int count) {
        return onStripe(chunk, () -> {
            ChunkFile f = resyncing.containsKey(chunk) ? null : file(chunk, false);
            return f == null ? List.<BlockRange>of() : f.verify(firstBlock, count, files);
        });
    }

    /** Bytes the chunk's file spans (0 if it has none). */
    public long sizeOf(ChunkId chunk) throws IOException {
        ChunkFile f = file(chunk, false);
        return f == null ? 0 : f.size();
    }

    /** Every chunk with a file on this node. */
    public List<ChunkId> chunks() throws IOException {
        List<ChunkId> out = new ArrayList<>();
        try (Stream<Path> vols = Files.list(root)) {
            for (Path v : (Iterable<Path>) vols::iterator) {
                String vn = v.getFileName().toString();
                if (!Files.isDirectory(v) || !vn.matches("\\d+")) {
                    continue;
                }
                try (Stream<Path> cs = Files.list(v)) {
                    cs.map(p -> p.getFileName().toString()).filter(n -> n.matches("\\d+"))
                            .forEach(n -> out.add(new ChunkId(Long.parseLong(vn), Long.parseLong(n))));
                }
            }
        }
        return out;
    }

    private ChunkFile file(ChunkId chunk, boolean create) throws IOException {
        if (closed) {
            throw new IOException("chunk store is closed");
        }
        ChunkFile f = open.get(chunk);
        if (f != null) {
            return f;
        }
        Path file = fileOf(chunk);
        if (!create && !Files.exists(file)) {
            return null;
        }
        try {
            return open.computeIfAbsent(chunk, c -> {
                try {
                    Path dir = file.getParent();
                    if (!Files.isDirectory(dir)) {
                        Files.createDirectories(dir);
                        files.syncDirectory(root);
                    }
                    boolean created = !Files.exists(file);
                    boolean unsummed = !created && !Files.exists(ChunkFile.sidecarOf(file));
                    ChunkFile cf = ChunkFile.open(c, file, files, true, sumMemory);
                    if (unsummed) {
                        // A chunk file from before checksums (or whose sidecar was lost): sum what is there
                        // rather than report every block of it as corrupt.
                        LOG.warn("chunk {} has no checksum file; computing it from the data as it is", c);
                        cf.rebuildChecksums();
                        cf.force();
                        files.syncDirectory(dir);
                    }
                    if (created) {
                        // The file's name must outlive a power loss as surely as the data forced into it.
                        files.syncDirectory(dir);
                    }
                    return cf;
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    /**
     * The checkpoint: forces every dirty chunk, then records which chunks are still dirty and the
     * sequence forced for each. What a chunk's entry may claim is read on its stripe, after the
     * writes queued before it (they are in the file then); the fsync itself runs here, off the
     * stripe, so the chunk's new writes do not queue behind it (a checkpoint's fsyncs took tens to
     * hundreds of milliseconds on a busy disk, stalling every write of the chunk meanwhile). An
     * fsync that starts after those writes returned covers them; later writes it may also cover
     * are not claimed.
     */
    public void flush() throws IOException {
        synchronized (flushLock) {
            List<ChunkId> chunks = new ArrayList<>(dirty.keySet());
            List<CompletableFuture<StripeSnapshot>> seen = new ArrayList<>();
            for (ChunkId c : chunks) {
                seen.add(onStripe(c, () -> {
                    Tracked t = dirty.get(c);
                    return t == null ? null : new StripeSnapshot(t.writes, t.latestSequence, open.get(c));
                }));
            }
            IOException failed = null;
            boolean turnedClean = false;
            List<ChunkId> nowClean = new ArrayList<>();
            // Wait for the forces before taking dirtyLock: a write queued on a stripe ahead of its
            // force may need the lock (markDirty), so waiting under it deadlocks the stripe.
            long[][] results = new long[chunks.size()][];
            boolean[] ok = new boolean[chunks.size()];
            for (int i = 0; i < chunks.size(); i++) {
                try {
                    StripeSnapshot snap = seen.get(i).join();
                    results[i] = snap == null ? null : forceOffStripe(chunks.get(i), snap);
                    ok[i] = true;
                } catch (CompletionException e) {
                    failed = e.getCause() instanceof UncheckedIOException u ? u.getCause()
                            : new IOException("flush of chunk " + chunks.get(i) + " failed: " + e.getCause(), e.getCause());
                } catch (IOException e) {
                    failed = e;
                }
            }
            synchronized (dirtyLock) {
                for (int i = 0; i < chunks.size(); i++) {
                    ChunkId c = chunks.get(i);
                    if (!ok[i]) {
                        continue;
                    }
                    long[] r = results[i];
                    Tracked t = dirty.get(c);
                    if (r == null || t == null || resyncing.containsKey(c)) {
                        continue;
                    }
                    if (t.writes == r[0] && r[0] == t.writesAtLastFlush && !hasUnconfirmed(c)) {
                        // Idle for a whole interval and forced: clean.
                        dirty.remove(c);
                        forced.put(c, r[1]);
                        turnedClean = true;
                        nowClean.add(c);
                    } else {
                        // Still being written: it stays recorded (forced up to r[1]), so its next write
                        // costs no record save; a power loss then resyncs at most a little more.
                        t.forcedSequence = Math.max(t.forcedSequence, r[1]);
                        t.writesAtLastFlush = r[0];
                    }
                }
                record.save(false, entries());
                if (turnedClean) {
                    // After the dirty record: a crash between the two leaves the chunk clean without
                    // a recorded sequence, which only costs a whole copy, never a missed write.
                    applied.save(true, cleanEntries());
                }
            }
            // Checksums of chunks no longer written leave memory (see BlockSums); just forced, they write nothing.
            for (ChunkId c : nowClean) {
                ChunkFile f = open.get(c);
                try {
                    if (f != null) {
                        f.releaseSums();
                    }
                } catch (IOException e) {
                    LOG.warn("chunk {}: could not write its checksums back: {}", c, e.toString());
                }
            }
            releaseUnreadSums();
            if (failed != null) {
                throw failed;
            }
        }
    }

    /** Checksums held for reads leave memory after an interval without a read (chunks being written keep theirs). */
    private void releaseUnreadSums() {
        for (Map.Entry<ChunkId, ChunkFile> e : open.entrySet()) {
            if (dirty.containsKey(e.getKey())) {
                continue;
            }
            try {
                e.getValue().releaseSumsIfUnread();
            } catch (IOException ex) {
                LOG.warn("chunk {}: could not let its checksums go: {}", e.getKey(), ex.toString());
            }
        }
    }

    /** A dirty chunk as its stripe saw it: writes and latest sequence so far, and its open file (or null). */
    private record StripeSnapshot(long writes, long sequence, ChunkFile file) {
    }

    /**
     * Forces the snapshot's file; if that file was closed meanwhile (the chunk was deleted, or a
     * compaction swapped in a new file, forced before the swap), forces whatever is open now on
     * the stripe instead. Returns {writes, sequence} as the snapshot claimed them.
     */
    private long[] forceOffStripe(ChunkId c, StripeSnapshot snap) throws IOException {
        try {
            if (snap.file() != null) {
                snap.file().force();
            }
        } catch (java.nio.channels.ClosedChannelException closed) {
            await(onStripe(c, () -> {
                ChunkFile now = open.get(c);
                if (now != null) {
                    now.force();
                }
                return null;
            }));
        }
        return new long[]{snap.writes(), snap.sequence()};
    }

    /**
     * Forces every chunk written since the last checkpoint now (a middle promoted to tail calls
     * this before it acknowledges anything). Fails, rather than logs, when a force fails: the
     * caller must not claim durability then.
     */
    public void flushAll() {
        try {
            flush();
        } catch (IOException e) {
            throw new UncheckedIOException("chunk flush failed", e);
        }
    }

    /** Number of chunks recorded dirty (written since the last checkpoint). */
    public int dirtyCount() {
        return dirty.size();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        flusher.shutdownNow();
        // Before the stripes stop: a compaction between two pieces gives up and deletes its copy.
        sparsifier.close();
        for (Stripe s : stripes) {
            s.shutdown();
        }
        try {
            for (Stripe s : stripes) {
                s.awaitTermination(30, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            synchronized (flushLock) {
                for (ChunkFile f : open.values()) {
                    f.force();
                }
                synchronized (dirtyLock) {
                    // Chunks still in resync stay dirty: the next start resyncs them again.
                    List<DirtyChunks.Entry> left = new ArrayList<>();
                    for (DirtyChunks.Entry e : entries()) {
                        if (resyncing.containsKey(e.chunk())) {
                            left.add(e);
                        }
                    }
                    // Everything is forced now: every chunk not in resync is clean up to its latest sequence.
                    java.util.Set<ChunkId> held = new java.util.HashSet<>();
                    for (DirtyChunks.Entry e : left) {
                        held.add(e.chunk());
                    }
                    dirty.forEach((c, t) -> {
                        if (!held.contains(c)) {
                            forced.put(c, t.latestSequence);
                        } else {
                            forced.remove(c);
                        }
                    });
                    applied.save(true, cleanEntries());
                    record.save(left.isEmpty(), left);
                }
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn("chunk store could not record a clean shutdown: {}", e.toString());
        }
        closed = true;
        closeOpenFiles();
        try {
            applied.close();
        } catch (IOException ignored) {
            // closing on shutdown: nothing more to do
        }
        try {
            record.close();
        } catch (IOException ignored) {
            // closing on shutdown: nothing more to do
        }
    }

    private void closeOpenFiles() {
        for (ChunkFile f : open.values()) {
            try {
                f.close();
            } catch (IOException ignored) {
                // closing on shutdown: nothing more to do
            }
        }
        open.clear();
    }

    /** For tests: the chunks the store holds dirty right now. */
    Collection<ChunkId> dirtyChunks() {
        return List.copyOf(dirty.keySet());
    }
}
