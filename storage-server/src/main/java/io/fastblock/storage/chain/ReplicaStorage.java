package io.fastblock.storage.chain;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.chunk.ChunkStore;
import io.fastblock.storage.chunk.DirtyChunks;
import io.fastblock.storage.log.LogStore;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.NoSuchFileException;
import java.util.Collection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Function;

/**
 * How a replica stores a group's data for its position in the chain (durability follows the
 * position): head, middle and joining node write the chunk file in place without fsync; the tail
 * appends to its log (group commit, fsync) and acknowledges on that. With {@link TailLayout#LOG}
 * the tail reads the log over the base file (the in-place chunk file), as {@link LogStore} does;
 * with {@link TailLayout#LOG_AND_IN_PLACE} it also writes the chunk file and reads that.
 *
 * <p>Moving between the layouts: a node that becomes tail first makes its chunk files durable
 * ({@link #makeDurable}); a node that is not (or stops being) tail folds the log's extents of the
 * group's chunks into the chunk files ({@link #leaveTail}) before it writes them in place, so old
 * log data never shadows newer in-place data.
 */
public class ReplicaStorage {
    private final ChunkStore chunks;
    private final LogStore log;
    private final Executor blocking;
    private final TailLayout layout;

    /** {@code log} must have been opened over {@code chunks} as its base files (see {@code ChunkStoreBase}). */
    public ReplicaStorage(ChunkStore chunks, LogStore log, Executor blocking, TailLayout layout) {
        this.chunks = chunks;
        this.log = log;
        this.blocking = blocking;
        this.layout = layout;
    }

    public TailLayout layout() {
        return layout;
    }

    /**
     * Head, middle, joining: a positional write, no fsync. {@code sequence} (0 for copied data) and
     * the group let a resync after a power loss find what to fetch. Takes ownership of {@code data}.
     */
    public CompletableFuture<Void> inPlace(int groupId, long sequence, ChunkId chunk, long offset, ByteBuf data) {
        return chunks.writeAsync(groupId, sequence, chunk, offset, data);
    }

    /** A write applied here as head or middle is on its way to the tail (see {@link ChunkStore#unconfirmedWrite}). */
    public void unconfirmedWrite(ChunkId chunk) {
        chunks.unconfirmedWrite(chunk);
    }

    /** The tail's answer for such a write: {@code reached} if the tail has it (see {@link ChunkStore#confirmed}). */
    public void confirmed(ChunkId chunk, boolean reached) {
        chunks.confirmed(chunk, reached);
    }

    /** Tail: completes when the write is durable (log fsync) and readable. Takes ownership of {@code data}. */
    public CompletableFuture<Void> durable(int groupId, ChunkId chunk, long offset, long sequence, ByteBuf data) {
        if (layout == TailLayout.LOG) {
            return log.append(chunk, offset, sequence, data);
        }
        CompletableFuture<Void> logged = log.append(chunk, offset, sequence, data.retainedDuplicate());
        CompletableFuture<Void> placed = chunks.writeAsync(groupId, sequence, chunk, offset, data);
        return CompletableFuture.allOf(logged, placed);
    }

    /**
     * Gives back {@code [offset, offset + length)} of a chunk (block-aligned) for this position.
     * Every position trims its chunk file in place, submitted now so it is ordered with the
     * writes around it ({@code whole}: the chunk's files are deleted). The tail also appends a
     * trim record to its log and answers once that is fsynced: the log is the truth after a
     * crash, and its index hole hides whatever an unsynced chunk file or older records still hold.
     */
    public CompletableFuture<Void> trim(int groupId, ChunkId chunk, long offset, int length, long sequence, boolean durable,
                                        boolean whole) {
        CompletableFuture<Void> placed = chunks.trimAsync(groupId, sequence, chunk, offset, length, whole);
        if (!durable) {
            return placed;
        }
        CompletableFuture<Void> logged = log.trim(chunk, offset, sequence, length);
        return CompletableFuture.allOf(logged, placed);
    }

    /**
     * This node takes (or keeps, after a restart) the tail position of the group: records the log
     * horizon {@code sequence} unless one is recorded (every later write of the group is appended to
     * the log). Failing to record it only costs returning members whole copies.
     */
    public void enterTail(int groupId, long sequence) {
        try {
            log.horizonIfAbsent(groupId, sequence);
        } catch (IOException e) {
            org.slf4j.LoggerFactory.getLogger(ReplicaStorage.class).warn("group {}: log horizon not recorded: {}", groupId,
                    e.toString());
        }
    }

    /** This node is not (or no longer) the group's tail: its log stops telling the group's history. */
    public void forgetTail(int groupId) {
        try {
            log.dropHorizon(groupId);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot drop the log horizon of group " + groupId, e);
        }
    }

    /**
     * The tail's answer to "what changed in this chunk above {@code since}": complete only if
     * the log's horizon for the group is at or below {@code since} (the log holds every change
     * above it); otherwise the asker copies the whole chunk.
     */
    public CompletableFuture<io.fastblock.protocol.ChunkChanges> changedSince(int groupId, ChunkId chunk, long since) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                long horizon = log.horizon(groupId);
                if (since <= 0 || horizon < 0 || horizon > since) {
                    return io.fastblock.protocol.ChunkChanges.UNKNOWN;
                }
                return new io.fastblock.protocol.ChunkChanges(true, log.changedSince(chunk, since));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, blocking);
    }

    /** The sequence up to which this node held every write of the chunk when it started (0: unknown). */
    public long sequenceAtOpen(ChunkId chunk) {
        return chunks.sequenceAtOpen(chunk);
    }

    /**
     * The allocated ranges of {@code [offset, offset + length)} of this replica's copy for its
     * position. A chunk still resyncing after a power loss is answered by the tail (through the
     * repairing reads, when set); a tail waits for its own resync.
     */
    public CompletableFuture<io.fastblock.protocol.Extents> extents(io.fastblock.protocol.ChainAddress chain, ChunkId chunk,
                                                                    long offset, long length, boolean tail) {
        if (tail && layout == TailLayout.LOG) {
            return chunks.whenResynced(chunk).thenApplyAsync(v -> {
                try {
                    return log.extents(chunk, offset, length);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }, blocking);
        }
        RepairingReads r = repairing;
        if (chunks.isResyncing(chunk)) {
            if (!tail && r != null) {
                return r.extents(groups, chain, chunk, offset, (int) length);
            }
            return chunks.whenResynced(chunk).thenCompose(v -> chunks.extentsAsync(chunk, offset, length));
        }
        return chunks.extentsAsync(chunk, offset, length);
    }

    /** Optional (integrity): reads that answer a bad or resyncing local copy from another replica and repair it. */
    public interface RepairingReads {
        CompletableFuture<ByteBuf> read(GroupLookup groups, io.fastblock.protocol.ChainAddress chain, ChunkId chunk, long offset,
                                        int length, ByteBufAllocator alloc);

        /** The allocation of a chunk whose local copy is resyncing, from the group's tail. */
        CompletableFuture<io.fastblock.protocol.Extents> extents(GroupLookup groups, io.fastblock.protocol.ChainAddress chain,
                                                                 ChunkId chunk, long offset, int length);

        /** The range from the other members, for a tail whose own copy failed its check with {@code bad}. */
        CompletableFuture<ByteBuf> fromOtherMembers(GroupLookup groups, io.fastblock.protocol.ChainAddress chain, ChunkId chunk,
                                                    long offset, int length, IOException bad, ByteBufAllocator alloc);
    }

    private volatile RepairingReads repairing;
    private volatile GroupLookup groups;
    private volatile Function<DirtyChunks.Entry, CompletableFuture<Void>> resync;

    /** What resyncs a chunk held after a failed local write (integrity.NodeIntegrity#resync); set once at start-up. */
    public ReplicaStorage withResync(Function<DirtyChunks.Entry, CompletableFuture<Void>> resyncer) {
        this.resync = resyncer;
        return this;
    }

    /**
     * A head's or middle's in-place write failed while the chain went on with it (the tail may
     * have answered the client directly): the chunk's reads go to the tail from now on, and once
     * {@code settled} (the write's answer from the chain is in, so the tail holds it or never
     * will) the chunk is copied back from the tail. Without a resync (no integrity module) the
     * chunk stays held: its reads keep going to the tail.
     */
    public void inPlaceFailed(int groupId, ChunkId chunk, CompletableFuture<?> settled) {
        DirtyChunks.Entry held = chunks.holdForResync(chunk, groupId);
        Function<DirtyChunks.Entry, CompletableFuture<Void>> r = resync;
        if (held != null && r != null) {
            settled.handle((v, e) -> r.apply(held));
        }
    }

    /** Routes client reads through {@code reads} (integrity.ReadRepair); set once at start-up. */
    public ReplicaStorage withRepairingReads(RepairingReads reads, GroupLookup groupLookup) {
        this.repairing = reads;
        this.groups = groupLookup;
        return this;
    }

    /**
     * A client read under {@code chain}: at head and middle through the repairing reads when set
     * (they repair the chunk file), at the tail of the log layout from the log over the base file
     * (the log checks its records, the chunk store its blocks): where either finds its copy bad,
     * the other members answer (the scrubbers repair the copy).
     */
    public CompletableFuture<ByteBuf> read(io.fastblock.protocol.ChainAddress chain, ChunkId chunk, long offset, int length,
                                           boolean tail, ByteBufAllocator alloc) {
        RepairingReads r = repairing;
        if (r == null) {
            return read(chunk, offset, length, tail, alloc);
        }
        if (!(tail && layout == TailLayout.LOG)) {
            return r.read(groups, chain, chunk, offset, length, alloc);
        }
        return log.readAsync(chunk, offset, length, alloc).handle((buf, err) -> {
            if (err == null) {
                return CompletableFuture.completedFuture(buf);
            }
            Throwable cause = ReplicaService.unwrap(err);
            if (cause instanceof io.fastblock.storage.log.CorruptRecordException
                    || cause instanceof io.fastblock.storage.chunk.CorruptBlockException) {
                return r.fromOtherMembers(groups, chain, chunk, offset, length, (IOException) cause, alloc);
            }
            return CompletableFuture.<ByteBuf>failedFuture(cause);
        }).thenCompose(f -> f);
    }

    /** Reads this replica's copy for its position; the caller owns the buffer. */
    public CompletableFuture<ByteBuf> read(ChunkId chunk, long offset, int length, boolean tail, ByteBufAllocator alloc) {
        return tail && layout == TailLayout.LOG ? log.readAsync(chunk, offset, length, alloc)
                : chunks.readAsync(chunk, offset, length, alloc);
    }

    /** Bytes of the chunk file (the in-place copy; a tail's log may reach further, see {@link GroupChunks#bound}). */
    public long length(ChunkId chunk) {
        try {
            return chunks.sizeOf(chunk);
        } catch (NoSuchFileException e) {
            return 0;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Makes every in-place write already completed to these chunks durable (fsync of each chunk
     * file), before a node acknowledges anything as tail.
     */
    public CompletableFuture<Void> makeDurable(Collection<ChunkId> groupChunks) {
        return CompletableFuture.runAsync(() -> {
            for (ChunkId c : groupChunks) {
                try {
                    chunks.force(c);
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot make chunk " + c + " durable", e);
                }
            }
        }, blocking);
    }

    /**
     * Folds the log's extents of these chunks into their chunk files (fsynced). The caller has
     * stopped log appends for them (every append already started has completed) and writes them
     * in place only after this completes ({@link LogStore#fold}'s contract).
     */
    public CompletableFuture<Void> leaveTail(Collection<ChunkId> groupChunks) {
        CompletableFuture<?>[] folds = groupChunks.stream().map(log::fold).toArray(CompletableFuture[]::new);
        return CompletableFuture.allOf(folds);
    }
}
