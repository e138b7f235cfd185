package io.fastblock.gateway.client;

import io.fastblock.gateway.scsi.BlockDevice;
import io.fastblock.gateway.scsi.DeviceException;
import io.fastblock.gateway.scsi.IoAdmission;
import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.Extents;
import io.fastblock.protocol.Status;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.TrimPlan;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An open volume as a block device: splits each request at chunk boundaries, finds each chunk's
 * chain through the {@link ChunkMapCache}, and sends one storage request per piece. Writes go to
 * the chain's head (allocating the chunk on first write); reads go to the head or the middle by
 * the {@link StreamClassifier}'s verdict, and read zeros from chunks never allocated without
 * allocating them. A piece that fails in a way a chain repair cures (timeout, lost connection,
 * IO_ERROR, a moved chain) is resent, after asking the namenode for the chunk's route again, until
 * the volume request's retry budget ends; reads go to another member of the chain each time.
 */
public final class FastVolume implements BlockDevice {
    private static final Logger LOG = LoggerFactory.getLogger(FastVolume.class);
    private volatile VolumeInfo info;
    /** The volume's layers and their chunk maps; replaced whole when a snapshot, clone or revert moves the top. */
    private volatile LayerStack layers;
    private volatile LayerSource layerSource;
    private final LayeredReads layeredReads;
    /** Orders read-modify-writes of partial 4 KiB blocks on layered volumes (in 4 KiB units). */
    private final io.fastblock.gateway.scsi.LbaRangeLocks blockLocks = new io.fastblock.gateway.scsi.LbaRangeLocks();
    private final List<Runnable> capacityListeners = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final StorageTransport storage;
    private final ClientSettings settings;
    private final ClientMetrics metrics;
    private final ByteBufAllocator alloc;
    private final Executor retryExecutor;
    private final ReadRouter router = new ReadRouter();
    private final StreamClassifier readStreams;
    private final StreamClassifier writeStreams;
    private volatile long leaseEpoch;
    private volatile boolean closed;
    private volatile VolumeLease lease;
    private volatile IoAdmission admission = IoAdmission.NONE;
    private volatile AutoCloseable admissionRelease = () -> { };
    private volatile ReadAhead readAhead;
    /** Told of every range this volume has changed (other open devices' read-ahead). */
    private volatile java.util.function.BiConsumer<Long, Long> mutationListener = (offset, length) -> { };

    public FastVolume(VolumeInfo info, ChunkMapCache chunks, StorageTransport storage, ClientSettings settings,
                      ClientMetrics metrics, ByteBufAllocator alloc, Executor retryExecutor) {
        if (info.blockSize() <= 0 || info.chunkSize() <= 0 || info.size() < 0) {
            throw new IllegalArgumentException("bad volume geometry: " + info);
        }
        this.info = info;
        this.layers = LayerStack.single(info.topLayer(), chunks);
        this.layeredReads = new LayeredReads(storage, alloc, settings, () -> leaseEpoch);
        this.storage = storage;
        this.settings = settings;
        this.metrics = metrics;
        this.alloc = alloc;
        this.retryExecutor = retryExecutor;
        this.readStreams = new StreamClassifier(settings.streamsPerVolume(), settings.streamGapBytes(),
                settings.sequentialAfter());
        this.writeStreams = new StreamClassifier(settings.streamsPerVolume(), settings.streamGapBytes(),
                settings.sequentialAfter());
    }

    @Override
    public long sizeBytes() {
        return info.size();
    }

    @Override
    public int blockSize() {
        return info.blockSize();
    }

    @Override
    public long volumeId() {
        return info.id();
    }

    /** Largest merged write ({@link io.fastblock.gateway.scsi.WriteCoalescer}); see {@link #coalescedWriteBytes}. */
    static final int COALESCE_WINDOW = 64 << 10;

    /**
     * {@link #COALESCE_WINDOW}, halved until it divides the chunk size and fits one storage request,
     * so a merged write is one request to one chain; 0 when no such size of at least a block exists.
     */
    @Override
    public int coalescedWriteBytes() {
        int w = COALESCE_WINDOW;
        while (w >= info.blockSize() && (w > settings.maxRequestBytes() || info.chunkSize() % w != 0)) {
            w >>= 1;
        }
        return w >= info.blockSize() && w % info.blockSize() == 0 ? w : 0;
    }

    @Override
    public String name() {
        return info.name();
    }

    public VolumeInfo info() {
        return info;
    }

    /** The chunk map of the layer writes go to. */
    public ChunkMapCache chunkMap() {
        return layers.topMap();
    }

    public LayerStack layers() {
        return layers;
    }

    /**
     * Where this volume learns its layers from (the namenode): with it, a volume with lower layers
     * reads through them, and a write refused by a sealed layer follows the volume to its new top.
     * Installs {@link #info()}'s stack at once.
     */
    public void useLayers(LayerSource source) {
        this.layerSource = source;
        install(info);
    }

    /**
     * The namenode's current view of the volume (polled, or asked after a sealed layer refused a
     * write): a new layer stack is installed, a larger size announced to capacity listeners.
     */
    public void refreshed(VolumeInfo fresh) {
        install(fresh);
    }

    private void install(VolumeInfo fresh) {
        boolean grew;
        synchronized (this) {
            LayerStack current = layers;
            LayerSource source = layerSource;
            if (source != null && !fresh.layers().equals(current.ids())) {
                java.util.Map<Long, ChunkMapCache> maps = new java.util.HashMap<>(current.reusableFor(fresh.layers()));
                for (long layer : fresh.layers()) {
                    maps.computeIfAbsent(layer, l -> source.cache(l, l == fresh.topLayer()));
                }
                layers = new LayerStack(fresh.layers(), maps);
                // A revert puts other data under the volume's offsets.
                clearReadAhead();
                LOG.info("volume {}: {} (was {})", fresh.name(), layers, current.ids());
            }
            grew = fresh.size() > info.size();
            if (grew) {
                info = new VolumeInfo(info.id(), info.name(), fresh.size(), info.blockSize(), info.chunkSize(),
                        info.iqn(), info.state(), info.createdAt(), fresh.allocatedChunks(), fresh.layers());
            }
        }
        if (grew) {
            LOG.info("volume {} grew to {} bytes", fresh.name(), fresh.size());
            for (Runnable r : capacityListeners) {
                r.run();
            }
        }
    }

    @Override
    public void onCapacityChange(Runnable listener) {
        capacityListeners.add(listener);
    }

    /**
     * A write was refused by a sealed layer (or an allocation named one): asks the namenode whether
     * the volume's top moved since {@code seen}. True when writes should go again to the new top.
     */
    private CompletableFuture<Boolean> followLayers(LayerStack seen) {
        LayerSource source = layerSource;
        if (layers.top() != seen.top()) {
            return CompletableFuture.completedFuture(true);
        }
        if (source == null) {
            return CompletableFuture.completedFuture(false);
        }
        return source.refresh().thenApply(fresh -> {
            install(fresh);
            return layers.top() != seen.top();
        });
    }

    /** The lease epoch sent with every request (0 until the write lease is taken, and without a lease). */
    public long leaseEpoch() {
        return leaseEpoch;
    }

    public void leaseEpoch(long epoch) {
        this.leaseEpoch = epoch;
    }

    /**
     * Makes writes take and carry {@code lease}'s epoch. Without a lease (tests of the data path
     * alone) writes carry {@link #leaseEpoch()} as set.
     */
    public void useLease(VolumeLease lease) {
        this.lease = lease;
    }

    public VolumeLease lease() {
        return lease;
    }

    /** Per-volume QoS for the SCSI layer; {@code release} runs when this open volume closes. */
    public void useAdmission(IoAdmission admission, AutoCloseable release) {
        this.admission = admission;
        this.admissionRelease = release;
    }

    @Override
    public IoAdmission admission() {
        return admission;
    }

    /**
     * Answers this volume's small sequential reads from windows read ahead of them ({@link ReadAhead})
     * of {@code windowBytes} each, at most {@code maxWindows} at a time, each for {@code maxAge} after
     * its read was sent, and within the gateway-wide {@code budget}. {@code mutations} is told of every
     * range this volume has changed, so other devices of the volume on this gateway drop what they
     * read ahead of it.
     */
    void useReadAhead(int windowBytes, int maxWindows, java.time.Duration maxAge, ReadAhead.Budget budget,
                      java.util.function.BiConsumer<Long, Long> mutations) {
        ReadAhead old = readAhead;
        readAhead = new ReadAhead(windowBytes, maxWindows, maxAge.toNanos(), budget, () -> info.size(), (o, l) -> {
            DeviceException refused = refuse(o, l);
            return refused != null ? CompletableFuture.failedFuture(refused)
                    : readThrough(o, l, AccessPattern.SEQUENTIAL, System.nanoTime(), false);
        });
        mutationListener = mutations;
        if (old != null) {
            old.clear();
        }
    }

    /** Another device of this volume on this gateway changes [offset, offset + length): what was read ahead there goes. */
    public void invalidateReadAhead(long offset, long length) {
        ReadAhead ra = readAhead;
        if (ra != null) {
            ra.invalidate(offset, length);
        }
    }

    /** Drops read-ahead windows past their age (called periodically for open volumes). */
    public void expireReadAhead() {
        ReadAhead ra = readAhead;
        if (ra != null) {
            ra.expire();
        }
    }

    /** The volume's read-ahead, or null without it; for tests. */
    ReadAhead readAhead() {
        return readAhead;
    }

    private void clearReadAhead() {
        ReadAhead ra = readAhead;
        if (ra != null) {
            ra.clear();
        }
    }

    /**
     * A write or trim of [offset, offset + length) ended (or failed part way): nothing read ahead of
     * it, before or while it was out, may answer a read. Before it ends a read of the range may see
     * either bytes, as with any read concurrent with a write.
     */
    private void changed(long offset, long length) {
        invalidateReadAhead(offset, length);
        mutationListener.accept(offset, length);
    }

    /**
     * What the lease's loss does to this volume: the chunk map cached here and the data read ahead
     * are dropped (another gateway writes now). Writes fail FENCED from then on through the lease itself.
     */
    public void leaseLost(String reason) {
        layers.topMap().clear();
        clearReadAhead();
    }

    @Override
    public CompletableFuture<ByteBuf> read(long offset, int length) {
        DeviceException refused = refuse(offset, length);
        if (refused != null) {
            return CompletableFuture.failedFuture(refused);
        }
        if (length == 0) {
            return CompletableFuture.completedFuture(alloc.buffer(0));
        }
        long start = System.nanoTime();
        AccessPattern pattern = readStreams.classify(offset, length);
        metrics.classified(true, pattern);
        ReadAhead ra = readAhead;
        if (ra != null) {
            CompletableFuture<ByteBuf> early = ra.read(offset, length, pattern == AccessPattern.SEQUENTIAL);
            if (early != null) {
                metrics.readAhead(length);
                return early.whenComplete((buf, failure) -> metrics.readDone(start));
            }
        }
        return readThrough(offset, length, pattern, start, true);
    }

    /**
     * A read from the storage servers (or zeros for unallocated chunks), without the read-ahead;
     * {@code timed}: a volume read, whose latency is recorded from {@code start}.
     */
    private CompletableFuture<ByteBuf> readThrough(long offset, int length, AccessPattern pattern, long start,
                                                   boolean timed) {
        List<ChunkSlice> slices = ChunkSlice.split(offset, length, info.chunkSize(), settings.maxRequestBytes());
        @SuppressWarnings("unchecked")
        CompletableFuture<ByteBuf>[] parts = new CompletableFuture[slices.size()];
        LayerStack st = layers;
        for (int i = 0; i < parts.length; i++) {
            ChunkSlice s = slices.get(i);
            // One layer: the fast path. Lower layers: each block from the topmost layer holding it.
            parts[i] = st.layered() ? layeredReads.read(st, s.chunkIndex(), s.offsetInChunk(), s.length())
                    : readSlice(st, s, pattern, 0, start, Set.of());
        }
        CompletableFuture<ByteBuf> result = new CompletableFuture<>();
        CompletableFuture.allOf(parts).whenComplete((ignored, anyFailure) -> {
            if (timed) {
                metrics.readDone(start);
            }
            if (anyFailure != null) {
                for (CompletableFuture<ByteBuf> p : parts) {
                    if (!p.isCompletedExceptionally()) {
                        p.join().release();
                    }
                }
                result.completeExceptionally(firstFailure(parts));
                return;
            }
            if (parts.length == 1) {
                result.complete(parts[0].join());
                return;
            }
            CompositeByteBuf whole = alloc.compositeDirectBuffer(parts.length);
            for (CompletableFuture<ByteBuf> p : parts) {
                whole.addComponent(true, p.join());
            }
            result.complete(whole);
        });
        return result;
    }

    @Override
    public CompletableFuture<Void> write(long offset, ByteBuf data) {
        int length = data.readableBytes();
        DeviceException refused = refuse(offset, length);
        if (refused != null) {
            return CompletableFuture.failedFuture(refused);
        }
        if (length == 0) {
            return CompletableFuture.completedFuture(null);
        }
        long start = System.nanoTime();
        return underWriteLease(data, () -> writeWithEpoch(offset, data, length))
                .whenComplete((ok, failure) -> {
                    changed(offset, length);
                    metrics.writeDone(start);
                });
    }

    /**
     * Runs {@code mutation} (a write or a deallocation) with the volume's write lease epoch: the lease
     * is taken on first use; while it is held (every mutation but the first) the mutation runs at once,
     * with no future to wait on. Without a lease (tests of the data path alone) it runs with
     * {@link #leaseEpoch()} as set. {@code data}, if not null, is kept until a mutation that has to
     * wait for the lease completes: the caller may release its reference once the future completes.
     */
    private CompletableFuture<Void> underWriteLease(ByteBuf data,
                                                    java.util.function.Supplier<CompletableFuture<Void>> mutation) {
        VolumeLease l = lease;
        if (l == null) {
            return mutation.get();
        }
        long held = l.heldEpoch();
        if (held >= 0) {
            leaseEpoch = held;
            return mutation.get();
        }
        if (data != null) {
            data.retain();
        }
        CompletableFuture<Void> result = new CompletableFuture<>();
        l.writeEpoch().whenComplete((epoch, err) -> {
            if (err != null) {
                Throwable t = NamenodeClient.unwrap(err);
                result.completeExceptionally(t instanceof VolumeLease.LeaseLostException
                        ? new DeviceException(DeviceException.Reason.FENCED, "volume " + info.name()
                                + ": " + t.getMessage(), t)
                        : Failures.toDeviceException(t));
                return;
            }
            leaseEpoch = epoch;
            mutation.get().whenComplete((ok, failure) -> {
                if (failure != null) {
                    result.completeExceptionally(failure);
                } else {
                    result.complete(null);
                }
            });
        });
        return data == null ? result : result.whenComplete((v, e) -> data.release());
    }

    /** Every volume is thin: chunks are allocated on first write and given back by {@link #unmap}. */
    @Override
    public boolean thinProvisioned() {
        return true;
    }

    /**
     * Deallocates {@code [offset, offset + length)}: in each allocated chunk the whole 4 KiB blocks
     * are trimmed and partial blocks at the ends zero-written ({@link TrimPlan}); chunks never
     * allocated already read as zeros and need no request. Durable when it completes, like a write.
     */
    @Override
    public CompletableFuture<Void> unmap(long offset, long length) {
        DeviceException refused = refuse(offset, length);
        if (refused != null) {
            return CompletableFuture.failedFuture(refused);
        }
        if (length == 0) {
            return CompletableFuture.completedFuture(null);
        }
        return underWriteLease(null, () -> {
            long start = System.nanoTime();
            List<CompletableFuture<Void>> parts = new ArrayList<>();
            for (long pos = offset; pos < offset + length; ) {
                long index = pos / info.chunkSize();
                long within = pos % info.chunkSize();
                long n = Math.min(offset + length - pos, info.chunkSize() - within);
                parts.add(unmapInChunk(index, within, n, start));
                pos += n;
            }
            return allDone(parts.toArray(CompletableFuture[]::new));
        }).whenComplete((ok, failure) -> changed(offset, length));
    }

    private CompletableFuture<Void> unmapInChunk(long index, long within, long length, long start) {
        return routeWithRetry(() -> anyLayerHas(layers, index), 0, start).thenCompose(route -> {
            if (route.isEmpty()) {
                return CompletableFuture.completedFuture(null);
            }
            List<TrimPlan.Piece> plan = TrimPlan.of(within, length);
            CompletableFuture<?>[] pieces = new CompletableFuture[plan.size()];
            for (int i = 0; i < pieces.length; i++) {
                TrimPlan.Piece p = plan.get(i);
                ChunkSlice s = new ChunkSlice(index, p.offsetInChunk(), p.length(), 0);
                if (p.trim()) {
                    pieces[i] = writeSlice(s, null, 0, 0, start);
                } else {
                    ByteBuf zeros = alloc.directBuffer(p.length(), p.length()).writeZero(p.length());
                    pieces[i] = writeSlice(s, zeros, zeros.readerIndex(), 0, start).whenComplete((v, e) -> zeros.release());
                }
            }
            return allDone(pieces);
        });
    }

    /**
     * Provisioning status from {@code offset}: chunks never allocated are deallocated as a whole;
     * allocated ones are asked for their extents (one EXTENTS request each, any member answers).
     * At most {@link #STATUS_CHUNKS} allocated chunks per call, so an answer stays quick.
     */
    @Override
    public CompletableFuture<List<Extent>> lbaStatus(long offset, long length) {
        DeviceException refused = refuse(offset, Math.min(length, info.size() - offset));
        if (refused != null) {
            return CompletableFuture.failedFuture(refused);
        }
        List<Extent> out = new ArrayList<>();
        return statusFrom(offset, Math.min(info.size(), offset + length), out, 0).thenApply(v -> out);
    }

    static final int STATUS_CHUNKS = 4;

    private final ExtentsBatcher extentsBatcher = new ExtentsBatcher();

    /**
     * Appends the runs of {@code [pos, end)}: the next chunks' maps and EXTENTS are asked all at
     * once (as many chunks as may still be asked about), then appended in order. Asking them one
     * after the other made a GET LBA STATUS cost four storage round trips in a row; qemu sends one
     * before its first read of every region it does not know, 32 at a time at queue depth 32.
     */
    private CompletableFuture<Void> statusFrom(long pos, long end, List<Extent> out, int asked) {
        if (pos >= end || asked >= STATUS_CHUNKS) {
            return CompletableFuture.completedFuture(null);
        }
        long firstIndex = pos / info.chunkSize();
        long lastIndex = (end - 1) / info.chunkSize();
        int batch = (int) Math.min(STATUS_CHUNKS - asked, lastIndex - firstIndex + 1);
        LayerStack st = layers;
        @SuppressWarnings("unchecked")
        CompletableFuture<ChunkStatus>[] parts = new CompletableFuture[batch];
        for (int i = 0; i < batch; i++) {
            long index = firstIndex + i;
            long chunkStart = index * info.chunkSize();
            long from = Math.max(pos, chunkStart);
            long to = Math.min(end, chunkStart + info.chunkSize());
            parts[i] = routeWithRetry(() -> anyLayerHas(st, index), 0, System.nanoTime()).thenCompose(route -> {
                if (route.isEmpty()) {
                    return CompletableFuture.completedFuture(new ChunkStatus(chunkStart, from, to, false, null));
                }
                if (st.layered()) {
                    // Some layer holds data in this chunk: reported mapped as a whole (never "deallocated",
                    // which would promise zeros where a lower layer's data shows through).
                    return CompletableFuture.completedFuture(new ChunkStatus(chunkStart, from, to, true, null));
                }
                // The whole chunk, so that concurrent askers can share one request (ExtentsBatcher).
                ChunkRoute known = route.get();
                return extentsBatcher.ask(new ChunkId(st.top(), index),
                                () -> extentsOf(known, index, 0, (int) info.chunkSize(), 0))
                        .thenApply(allocated -> new ChunkStatus(chunkStart, from, to, true, allocated));
            });
        }
        return allDone(parts).thenCompose(v -> {
            int nowAsked = asked;
            long next = pos;
            for (CompletableFuture<ChunkStatus> part : parts) {
                ChunkStatus c = part.join();
                if (!c.allocated()) {
                    ProvisioningMap.add(out, c.from(), c.to(), false);
                } else if (c.extents() == null) {
                    ProvisioningMap.add(out, c.from(), c.to(), true);
                    nowAsked++;
                } else {
                    ProvisioningMap.append(out, c.chunkStart(), c.from(), c.to(), c.extents());
                    nowAsked++;
                }
                next = c.to();
            }
            return statusFrom(next, end, out, nowAsked);
        });
    }

    /** One chunk's part of a status: unallocated, mapped as a whole ({@code extents} null), or its extents. */
    private record ChunkStatus(long chunkStart, long from, long to, boolean allocated, Extents extents) {
    }

    /** EXTENTS from the chain's members in turn (head first) until one answers. */
    private CompletableFuture<Extents> extentsOf(ChunkRoute route, long index, long offsetInChunk, int length,
                                                 int member) {
        if (member >= route.members().size()) {
            return CompletableFuture.failedFuture(new DeviceException(DeviceException.Reason.IO_ERROR,
                    "no member of chunk " + new ChunkId(layers.top(), index) + "'s chain answered EXTENTS"));
        }
        Replica r = route.members().get(member);
        return storage.extents(r.address(), chainOf(route), new ChunkId(layers.top(), index), offsetInChunk, length)
                .handle((resp, err) -> {
                    if (err == null && resp.isOk()) {
                        try {
                            return CompletableFuture.completedFuture(Extents.decode(resp.data()));
                        } catch (RuntimeException bad) {
                            LOG.warn("bad EXTENTS answer from {}: {}", r.address(), bad.getMessage());
                        } finally {
                            resp.data().release();
                        }
                    } else if (err == null) {
                        resp.data().release();
                        LOG.debug("EXTENTS of chunk {} at {}: {}", index, r.address(), resp.status());
                    }
                    return extentsOf(route, index, offsetInChunk, length, member + 1);
                }).thenCompose(f -> f);
    }

    private static CompletableFuture<Void> allDone(CompletableFuture<?>[] parts) {
        CompletableFuture<Void> result = new CompletableFuture<>();
        // Complete only when every piece is done (and with the first failure, if any).
        CompletableFuture.allOf(parts).whenComplete((ignored, anyFailure) -> {
            if (anyFailure != null) {
                result.completeExceptionally(firstFailure(parts));
            } else {
                result.complete(null);
            }
        });
        return result;
    }

    private CompletableFuture<Void> writeWithEpoch(long offset, ByteBuf data, int length) {
        metrics.classified(false, writeStreams.classify(offset, length));
        List<ChunkSlice> slices = ChunkSlice.split(offset, length, info.chunkSize(), settings.maxRequestBytes());
        @SuppressWarnings("unchecked")
        CompletableFuture<Void>[] parts = new CompletableFuture[slices.size()];
        long start = System.nanoTime();
        int base = data.readerIndex();
        for (int i = 0; i < parts.length; i++) {
            parts[i] = writeSlice(slices.get(i), data, base, 0, start);
        }
        if (parts.length == 1) {
            // One piece (every write within a chunk): its own future, failures mapped as firstFailure does.
            return parts[0].exceptionallyCompose(e -> CompletableFuture.failedFuture(Failures.toDeviceException(e)));
        }
        CompletableFuture<Void> result = new CompletableFuture<>();
        // Complete only when every piece is done, so the caller may release data right after.
        CompletableFuture.allOf(parts).whenComplete((ignored, anyFailure) -> {
            if (anyFailure != null) {
                result.completeExceptionally(firstFailure(parts));
            } else {
                result.complete(null);
            }
        });
        return result;
    }

    /** Writes are durable on the chain when acknowledged, so every completed write is already flushed. */
    @Override
    public CompletableFuture<Void> flush() {
        if (closed) {
            return CompletableFuture.failedFuture(new DeviceException(DeviceException.Reason.UNAVAILABLE,
                    "volume " + info.name() + " is closed"));
        }
        return CompletableFuture.completedFuture(null);
    }

    public boolean isClosed() {
        return closed;
    }

    /** Closes once: a second call (a session and its logout both closing the device) does nothing. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        clearReadAhead();
        try {
            admissionRelease.close();
        } catch (Exception e) {
            LOG.debug("releasing the QoS of {}: {}", info.name(), e.toString());
        }
        VolumeLease l = lease;
        if (l != null) {
            l.close();
        }
    }

    /** A storage server saw a newer lease epoch than ours: the lease moved away from this gateway. */
    private void staleEpoch(String where) {
        VolumeLease l = lease;
        if (l != null && l.state() != VolumeLease.State.NONE) {
            l.lose("storage rejected epoch " + leaseEpoch + " (" + where + ")");
        } else {
            // A reader only: another gateway took the lease, and may have written since.
            layers.topMap().clear();
            clearReadAhead();
        }
    }

    private DeviceException refuse(long offset, long length) {
        if (closed) {
            return new DeviceException(DeviceException.Reason.UNAVAILABLE, "volume " + info.name() + " is closed");
        }
        if (offset < 0 || length < 0 || offset > info.size() - length) {
            return new DeviceException(DeviceException.Reason.OUT_OF_RANGE, "range [" + offset + ", +" + length
                    + ") outside volume " + info.name() + " of " + info.size() + " bytes");
        }
        return null;
    }

    private CompletableFuture<ByteBuf> readSlice(LayerStack st, ChunkSlice s, AccessPattern pattern, int attempt,
                                                 long start, Set<String> tried) {
        ChunkMapCache chunks = st.topMap();
        return routeWithRetry(() -> chunks.lookup(s.chunkIndex()), attempt, start).thenCompose((Optional<ChunkRoute> found) -> {
            if (found.isEmpty()) {
                metrics.zeroFill(s.length());
                return CompletableFuture.completedFuture(alloc.directBuffer(s.length(), s.length()).writeZero(s.length()));
            }
            ChunkRoute route = found.get();
            ReadRouter.Choice choice = tried.isEmpty() ? router.choose(route, pattern) : router.retry(route, tried);
            NodeAddress node = choice.replica().address();
            Set<String> triedNow = with(tried, choice.replica().id());
            return bounded(storage.read(node, chainOf(route), chunkOf(st, s), s.offsetInChunk(), s.length()), node, start)
                    .handle((resp, err) -> {
                        Failures.Action action;
                        DeviceException failure;
                        if (err == null && resp.isOk()) {
                            if (resp.data().readableBytes() != s.length()) {
                                int got = resp.data().readableBytes();
                                resp.data().release();
                                return CompletableFuture.<ByteBuf>failedFuture(new DeviceException(
                                        DeviceException.Reason.IO_ERROR, node + " returned " + got
                                        + " bytes for a read of " + s.length() + " in chunk " + chunkOf(s)));
                            }
                            metrics.read(choice.role(), s.length());
                            recovered("read", s, attempt, start, node);
                            return CompletableFuture.completedFuture(resp.data());
                        }
                        if (err != null) {
                            Throwable t = NamenodeClient.unwrap(err);
                            if (!(t instanceof StorageRequestException se)) {
                                return CompletableFuture.<ByteBuf>failedFuture(Failures.toDeviceException(t));
                            }
                            action = Failures.actionFor(se);
                            failure = new DeviceException(Failures.reasonFor(se), "read of chunk " + chunkOf(s)
                                    + " failed: " + se.getMessage(), se);
                        } else {
                            resp.data().release();
                            action = Failures.actionFor(resp.status());
                            failure = statusFailure("read", s, choice.replica(), resp);
                            if (resp.status() == Status.STALE_EPOCH) {
                                VolumeLease l = lease;
                                if (l != null && l.state() == VolumeLease.State.HELD) {
                                    staleEpoch("read of chunk " + chunkOf(s)); // the lease moved: no more writes
                                }
                                if (l != null && mayRetry(Failures.Action.RETRY, attempt, start)) {
                                    // Reading needs no lease, only the current epoch: learn it, read again.
                                    metrics.retry("stale_epoch");
                                    return l.refreshKnownEpoch().handle((epoch, e2) -> {
                                        if (epoch != null) {
                                            leaseEpoch = Math.max(leaseEpoch, epoch);
                                        }
                                        return later(attempt, () -> readSlice(st, s, pattern, attempt + 1, start, tried));
                                    }).thenCompose(f -> f);
                                }
                                staleEpoch("read of chunk " + chunkOf(s));
                            }
                        }
                        if (!mayRetry(action, attempt, start)) {
                            gaveUp(attempt, start, failure);
                            return CompletableFuture.<ByteBuf>failedFuture(failure);
                        }
                        if (action == Failures.Action.REFRESH_AND_RETRY) {
                            chunks.invalidate(s.chunkIndex(), route);
                        }
                        metrics.retry(retryReason(err, resp));
                        // Another member next (head, middle, tail in turn): it may be this one that is dead.
                        return later(attempt, () -> readSlice(st, s, pattern, attempt + 1, start, triedNow));
                    })
                    .thenCompose(f -> f);
        });
    }

    /** Writes {@code s} of {@code data} to the chain's head; with {@code data} null, trims it instead. */
    private CompletableFuture<Void> writeSlice(ChunkSlice s, ByteBuf data, int base, int attempt, long start) {
        LayerStack st = layers;
        if (st.layered()) {
            if (data == null) {
                // A trim would uncover what a lower layer holds here: write zeros instead.
                ByteBuf zeros = alloc.directBuffer(s.length(), s.length()).writeZero(s.length());
                return writeSlice(s, zeros, zeros.readerIndex(), attempt, start).whenComplete((v, e) -> zeros.release());
            }
            if (!PartialBlocks.aligned(s)) {
                return mergeAndWrite(st, s, data, base, attempt, start);
            }
        }
        String op = data == null ? "trim" : "write";
        ChunkMapCache chunks = st.topMap();
        ChunkRoute known = chunks.cachedRoute(s.chunkIndex());
        if (known != null) {
            // The usual case: the route is cached, no future to get it.
            try {
                return sendWrite(st, known, s, data, base, attempt, start, op);
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(Failures.toDeviceException(e));
            }
        }
        return routeWithRetry(() -> chunks.allocate(s.chunkIndex()), attempt, start).handle((route, allocFailure) -> {
            if (allocFailure == null) {
                return sendWrite(st, route, s, data, base, attempt, start, op);
            }
            if (PartialBlocks.staleLayer(allocFailure) && mayRetry(Failures.Action.RETRY, attempt, start)) {
                // A snapshot sealed the layer we allocate in: follow the volume to its new top.
                metrics.retry("stale_layer");
                return followLayers(st).thenCompose(moved -> writeSlice(s, data, base, attempt + 1, start));
            }
            return CompletableFuture.<Void>failedFuture(Failures.toDeviceException(allocFailure));
        }).thenCompose(f -> f);
    }

    /**
     * A write that covers 4 KiB blocks only partly, on a volume with lower layers: the top layer
     * allocates whole blocks, so the rest of each partial block is read through the layers and
     * written with it. Ordered against other such writes on the same blocks by {@link #blockLocks}
     * (overlapping SCSI commands are already ordered by the SCSI layer's own range locks).
     */
    private CompletableFuture<Void> mergeAndWrite(LayerStack st, ChunkSlice s, ByteBuf data, int base, int attempt,
                                                  long start) {
        long a = PartialBlocks.down(s.offsetInChunk());
        long end = s.offsetInChunk() + s.length();
        long b = PartialBlocks.up(end);
        long firstBlock = (s.chunkIndex() * info.chunkSize() + a) / PartialBlocks.BLOCK;
        return blockLocks.lock(firstBlock, (b - a) / PartialBlocks.BLOCK).thenCompose(held -> {
            boolean needHead = a < s.offsetInChunk();
            boolean needTail = end < b;
            boolean oneBlock = b - a == PartialBlocks.BLOCK;
            // One read when both partial ends are the same block.
            CompletableFuture<ByteBuf> head = needHead || (needTail && oneBlock)
                    ? layeredReads.read(st, s.chunkIndex(), a, PartialBlocks.BLOCK)
                    : CompletableFuture.completedFuture(null);
            CompletableFuture<ByteBuf> tail = needTail && !oneBlock
                    ? layeredReads.read(st, s.chunkIndex(), b - PartialBlocks.BLOCK, PartialBlocks.BLOCK)
                    : CompletableFuture.completedFuture(null);
            return head.thenCombine(tail, (h, t) -> {
                ByteBuf merged = alloc.directBuffer((int) (b - a), (int) (b - a));
                if (needHead) {
                    merged.writeBytes(h, h.readerIndex(), (int) (s.offsetInChunk() - a));
                }
                merged.writeBytes(data, base + s.bufferOffset(), s.length());
                if (needTail) {
                    ByteBuf src = oneBlock ? h : t;
                    long srcStart = oneBlock ? a : b - PartialBlocks.BLOCK;
                    merged.writeBytes(src, src.readerIndex() + (int) (end - srcStart), (int) (b - end));
                }
                if (h != null) {
                    h.release();
                }
                if (t != null) {
                    t.release();
                }
                return merged;
            }).thenCompose(merged -> writeSlice(new ChunkSlice(s.chunkIndex(), a, (int) (b - a), 0), merged,
                    merged.readerIndex(), attempt, start).whenComplete((v, e) -> merged.release()))
                    .whenComplete((v, e) -> held.release());
        });
    }

    /** The chunk's route in the topmost layer that has it, or empty when no layer does. */
    private CompletableFuture<Optional<ChunkRoute>> anyLayerHas(LayerStack st, long index) {
        return firstHolding(st, st.topDown(), 0, index);
    }

    private CompletableFuture<Optional<ChunkRoute>> firstHolding(LayerStack st, List<Long> ids, int at, long index) {
        if (at >= ids.size()) {
            return CompletableFuture.completedFuture(Optional.empty());
        }
        return st.map(ids.get(at)).lookup(index).thenCompose(r -> r.isPresent()
                ? CompletableFuture.completedFuture(r) : firstHolding(st, ids, at + 1, index));
    }

    private CompletableFuture<Void> sendWrite(LayerStack st, ChunkRoute route, ChunkSlice s, ByteBuf data, int base,
                                              int attempt, long start, String op) {
        ChunkMapCache chunks = st.topMap();
        {
            Replica head = route.head();
            // Resending after a timeout or a lost connection is safe: the same bytes (or the same
            // trim) at the same offset (SCSI leaves overlapping concurrent writes undefined, so
            // nothing can be in between).
            CompletableFuture<StorageResponse> sent = data == null
                    ? storage.trim(head.address(), chainOf(route), chunkOf(st, s), s.offsetInChunk(), s.length())
                    // A retained slice of the caller's buffer: no copy; the transport releases it once sent.
                    : storage.write(head.address(), route.tail().address(), chainOf(route), chunkOf(st, s), s.offsetInChunk(),
                            data.retainedSlice(base + s.bufferOffset(), s.length()));
            return bounded(sent, head.address(), start)
                    .handle((resp, err) -> {
                        Failures.Action action;
                        DeviceException failure;
                        if (err == null) {
                            resp.data().release();
                            if (resp.isOk()) {
                                if (data != null) {
                                    metrics.write(s.length());
                                }
                                recovered(op, s, attempt, start, head.address());
                                return CompletableFuture.<Void>completedFuture(null);
                            }
                            action = Failures.actionFor(resp.status());
                            failure = statusFailure(op, s, head, resp);
                            if (resp.status() == Status.STALE_EPOCH) {
                                if (mayRetry(Failures.Action.RETRY, attempt, start)) {
                                    // Sealed by a snapshot (the volume has a new top), or the lease moved.
                                    DeviceException refusedHere = failure;
                                    return followLayers(st).thenCompose(moved -> {
                                        if (moved) {
                                            metrics.retry("layer_sealed");
                                            return writeSlice(s, data, base, attempt + 1, start);
                                        }
                                        staleEpoch(op + " of chunk " + chunkOf(st, s));
                                        return CompletableFuture.<Void>failedFuture(refusedHere);
                                    });
                                }
                                staleEpoch(op + " of chunk " + chunkOf(st, s));
                            }
                        } else {
                            Throwable t = NamenodeClient.unwrap(err);
                            if (!(t instanceof StorageRequestException se)) {
                                return CompletableFuture.<Void>failedFuture(Failures.toDeviceException(t));
                            }
                            action = Failures.actionFor(se);
                            failure = new DeviceException(Failures.reasonFor(se), op + " of chunk " + chunkOf(s)
                                    + " failed: " + se.getMessage(), se);
                        }
                        if (!mayRetry(action, attempt, start)) {
                            gaveUp(attempt, start, failure);
                            return CompletableFuture.<Void>failedFuture(failure);
                        }
                        if (action == Failures.Action.REFRESH_AND_RETRY) {
                            chunks.invalidate(s.chunkIndex(), route);
                        }
                        metrics.retry(retryReason(err, resp));
                        return later(attempt, () -> writeSlice(s, data, base, attempt + 1, start));
                    })
                    .thenCompose(f -> f);
        }
    }

    /**
     * A chunk's route from the namenode, asked again while the volume request's budget lasts when
     * the namenode cannot answer (overloaded, failing over, 5xx): like a storage node, a namenode
     * hiccup during a chain repair must not reach the initiator. Other answers (404, 507) are final.
     */
    private <R> CompletableFuture<R> routeWithRetry(java.util.function.Supplier<CompletableFuture<R>> ask, int attempt,
                                                    long start) {
        CompletableFuture<R> asked;
        try {
            asked = ask.get();
        } catch (RuntimeException e) {
            asked = CompletableFuture.failedFuture(e);
        }
        return asked.handle((route, err) -> {
            if (err == null) {
                return CompletableFuture.completedFuture(route);
            }
            Throwable t = NamenodeClient.unwrap(err);
            boolean transient_ = t instanceof NamenodeUnavailableException
                    || (t instanceof NamenodeException ne && ne.httpStatus() >= 500 && ne.httpStatus() != 507);
            if (!transient_ || !mayRetry(Failures.Action.RETRY, attempt, start)) {
                return CompletableFuture.<R>failedFuture(Failures.toDeviceException(t));
            }
            metrics.retry("namenode");
            LOG.debug("chunk route not available ({}), asking again", t.toString());
            return later(attempt, () -> routeWithRetry(ask, attempt + 1, start));
        }).thenCompose(f -> f);
    }

    /** Rare (a chain repair, an overload), and what an operator asks about afterwards: how long the initiator waited. */
    private void recovered(String op, ChunkSlice s, int attempt, long start, NodeAddress node) {
        if (attempt > 0) {
            LOG.info("{} of chunk {} succeeded at {} on attempt {}, {} ms after the volume request started", op,
                    chunkOf(s), node, attempt + 1, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        }
    }

    private void gaveUp(int attempt, long start, DeviceException failure) {
        if (attempt > 0) {
            LOG.warn("gave up after {} attempts in {} ms: {}", attempt + 1,
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), failure.getMessage());
        }
    }

    private static String retryReason(Throwable err, StorageResponse resp) {
        if (err == null) {
            return resp.status().name().toLowerCase(Locale.ROOT);
        }
        return NamenodeClient.unwrap(err) instanceof StorageRequestException se
                && se.kind() == StorageRequestException.Kind.TIMEOUT ? "timeout" : "connection";
    }

    private static Set<String> with(Set<String> tried, String id) {
        Set<String> more = new HashSet<>(tried);
        more.add(id);
        return Set.copyOf(more);
    }

    /**
     * A retry starts only while the budget (counted from the volume request's start) leaves room
     * for a useful attempt; it is then cut at the budget's end by {@link #bounded}.
     */
    private boolean mayRetry(Failures.Action action, int attempt, long start) {
        if (action == Failures.Action.FAIL || closed || attempt + 1 >= settings.maxAttempts()) {
            return false;
        }
        long elapsed = System.nanoTime() - start;
        return elapsed + backoffNanos(attempt) + minAttemptNanos() <= settings.retryBudget().toNanos();
    }

    /** Shorter than this, an attempt could hardly get an answer even from a healthy chain. */
    private long minAttemptNanos() {
        return settings.requestTimeout().toNanos() / 4;
    }

    /**
     * {@code attempt} as it may last: the transport's own timeout, or less when the budget ends
     * first. An answer arriving after the cut is released here.
     */
    private CompletableFuture<StorageResponse> bounded(CompletableFuture<StorageResponse> attempt, NodeAddress node,
                                                       long start) {
        long left = start + settings.retryBudget().toNanos() - System.nanoTime();
        if (left >= settings.requestTimeout().toNanos()) {
            return attempt;
        }
        CompletableFuture<StorageResponse> cut = new CompletableFuture<>();
        attempt.whenComplete((resp, err) -> {
            if (err != null) {
                cut.completeExceptionally(err);
            } else if (!cut.complete(resp)) {
                resp.data().release();
            }
        });
        CompletableFuture.delayedExecutor(Math.max(0, left), TimeUnit.NANOSECONDS, retryExecutor).execute(() ->
                cut.completeExceptionally(new StorageRequestException(StorageRequestException.Kind.TIMEOUT, node,
                        "no answer before the retry budget of " + settings.retryBudget().toMillis() + " ms ran out",
                        null)));
        return cut;
    }

    private long backoffNanos(int attempt) {
        long base = settings.retryBackoff().toNanos();
        return Math.min(base << Math.min(attempt, 20), TimeUnit.MILLISECONDS.toNanos(500));
    }

    private <T> CompletableFuture<T> later(int attempt, java.util.function.Supplier<CompletableFuture<T>> next) {
        Executor delayed = CompletableFuture.delayedExecutor(backoffNanos(attempt), TimeUnit.NANOSECONDS, retryExecutor);
        return CompletableFuture.supplyAsync(next, delayed).thenCompose(f -> f);
    }

    private DeviceException statusFailure(String op, ChunkSlice s, Replica replica, StorageResponse resp) {
        return new DeviceException(Failures.reasonFor(resp.status()), op + " of chunk " + chunkOf(s) + " at "
                + replica.address() + " failed: " + resp.status()
                + (resp.message().isEmpty() ? "" : " (" + resp.message() + ")"));
    }

    private ChainAddress chainOf(ChunkRoute route) {
        return new ChainAddress(route.groupId(), route.chainVersion(), leaseEpoch);
    }

    /** The id a piece carries: the layer it goes to under {@code st}. */
    private static ChunkId chunkOf(LayerStack st, ChunkSlice s) {
        return new ChunkId(st.top(), s.chunkIndex());
    }

    private ChunkId chunkOf(ChunkSlice s) {
        return new ChunkId(layers.top(), s.chunkIndex());
    }

    private static DeviceException firstFailure(CompletableFuture<?>[] parts) {
        for (CompletableFuture<?> p : parts) {
            if (p.isCompletedExceptionally()) {
                try {
                    p.join();
                } catch (RuntimeException e) {
                    return Failures.toDeviceException(e);
                }
            }
        }
        return new DeviceException(DeviceException.Reason.IO_ERROR, "request failed");
    }
}
