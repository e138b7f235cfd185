package io.fastblock.storage.integrity;

import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.netty.buffer.ByteBuf;
import java.util.concurrent.CompletableFuture;

/** Reads another replica's copy of a chunk. The returned buffer belongs to the caller. */
public interface ReplicaReader {
    /**
     * A normal READ at {@code nodeId} under the client's own chain address (lease epoch
     * included): used to answer and repair a read whose local copy is bad.
     */
    CompletableFuture<ByteBuf> read(String nodeId, ChainAddress chain, ChunkId chunk, long offset, int length);

    /** A COPY_READ from the group's tail, outside the lease fence: used by resync, which holds no lease. */
    CompletableFuture<ByteBuf> copyRead(String nodeId, ChainAddress chain, ChunkId chunk, long offset, int length);

    /** The length of the chunk at the tail {@code nodeId} (CHUNK_LIST), 0 if it holds none. */
    CompletableFuture<Long> length(String nodeId, ChainAddress chain, ChunkId chunk);

    /**
     * The allocated ranges of the chunk at {@code nodeId} (EXTENTS), or null where this reader
     * cannot tell (the caller then leaves allocation as it is).
     */
    default CompletableFuture<io.fastblock.protocol.Extents> extents(String nodeId, ChainAddress chain, ChunkId chunk,
                                                                     long offset, int length) {
        return CompletableFuture.completedFuture(null);
    }

    /**
     * Which ranges of the chunk changed above {@code since} at the node (its tail), from its log
     * (CHANGES); {@link io.fastblock.protocol.ChunkChanges#UNKNOWN} if it cannot tell.
     */
    default CompletableFuture<io.fastblock.protocol.ChunkChanges> changes(String nodeId, ChainAddress chain, ChunkId chunk,
                                                                          long since) {
        return CompletableFuture.completedFuture(io.fastblock.protocol.ChunkChanges.UNKNOWN);
    }
}
