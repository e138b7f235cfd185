package io.fastblock.storage.chain;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.chunk.ChunkStore;
import io.fastblock.storage.log.LogStore;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.util.Collection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * How a replica stores a group's data for its position in the chain: in place without fsync as
 * head, middle or joining node; durably as tail.
 *
 * <p>Interim layout until the log store offers base-file reads and {@code fold}: the tail appends
 * every write to its log (the durable copy it acknowledges on) <em>and</em> writes it in place, and
 * every position reads the in-place chunk file. The in-place copy is therefore always complete,
 * so a node that stops being tail has nothing to fold, and a middle promoted to tail only has to
 * fsync its chunk files. The cost is a second (unsynced) write on the tail. When
 * {@code LogStore.fold(ChunkId)} and log-over-base reads exist, {@link #durable} becomes a log
 * append only, {@link #read} reads the log over the base file at the tail, and {@link #leaveTail}
 * folds.
 */
public class ReplicaStorage {
    private final ChunkStore chunks;
    private final LogStore log;
    private final Executor blocking;

    public ReplicaStorage(ChunkStore chunks, LogStore log, Executor blocking) {
        this.chunks = chunks;
        this.log = log;
        this.blocking = blocking;
    }

    /** Head, middle, joining: a positional write, no fsync. Takes ownership of {@code data}. */
    public CompletableFuture<Void> inPlace(ChunkId chunk, long offset, ByteBuf data) {
        return chunks.writeAsync(chunk, offset, data);
    }

    /** Tail: completes when the write is durable (log fsync) and readable. Takes ownership of {@code data}. */
    public CompletableFuture<Void> durable(ChunkId chunk, long offset, long sequence, ByteBuf data) {
        CompletableFuture<Void> logged = log.append(chunk, offset, sequence, data.retainedDuplicate());
        CompletableFuture<Void> placed = chunks.writeAsync(chunk, offset, data);
        return CompletableFuture.allOf(logged, placed);
    }

    /** Optional (integrity): reads that answer a bad or resyncing local copy from another replica and repair it. */
    public interface RepairingReads {
        CompletableFuture<ByteBuf> read(GroupLookup groups, io.fastblock.protocol.ChainAddress chain, ChunkId chunk, long offset,
                                        int length, ByteBufAllocator alloc);
    }

    private volatile RepairingReads repairing;
    private volatile GroupLookup groups;

    /** Routes client reads through {@code reads} (integrity.ReadRepair); set once at start-up. */
    public ReplicaStorage withRepairingReads(RepairingReads reads, GroupLookup groupLookup) {
        this.repairing = reads;
        this.groups = groupLookup;
        return this;
    }

    /** A client read under {@code chain}: through the repairing reads when set, else {@link #read}. */
    public CompletableFuture<ByteBuf> read(io.fastblock.protocol.ChainAddress chain, ChunkId chunk, long offset, int length,
                                           boolean tail, ByteBufAllocator alloc) {
        RepairingReads r = repairing;
        return r == null ? read(chunk, offset, length, tail, alloc) : r.read(groups, chain, chunk, offset, length, alloc);
    }

    /** Reads this replica's copy; the caller owns the buffer. */
    public CompletableFuture<ByteBuf> read(ChunkId chunk, long offset, int length, boolean tail, ByteBufAllocator alloc) {
        return chunks.readAsync(chunk, offset, length, alloc);
    }

    /** Bytes up to the end of the chunk's last written byte in this replica's copy. */
    public long length(ChunkId chunk) {
        try {
            return Files.size(chunks.fileOf(chunk));
        } catch (NoSuchFileException e) {
            return 0;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Makes every in-place write already completed durable, before a node acknowledges anything as
     * tail. (ChunkStore can only flush all its open files; that covers the group's chunks.)
     */
    public CompletableFuture<Void> makeDurable(Collection<ChunkId> groupChunks) {
        return CompletableFuture.runAsync(chunks::flushAll, blocking);
    }

    /** Called before a node that stops being tail takes in-place writes for these chunks. */
    public CompletableFuture<Void> leaveTail(Collection<ChunkId> groupChunks) {
        // Interim layout: the in-place copy is complete, nothing to fold.
        return CompletableFuture.completedFuture(null);
    }
}
