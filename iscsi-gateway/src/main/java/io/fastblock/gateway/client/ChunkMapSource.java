package io.fastblock.gateway.client;

import java.util.concurrent.CompletableFuture;

/** Where chunk placements come from: the namenode in production, an in-memory map in tests. */
public interface ChunkMapSource {
    /** Where chunk {@code index} of the volume lives, without allocating it. */
    CompletableFuture<ChunkLocation> lookupChunk(String volumeName, long index);

    /** Allocates chunk {@code index} if needed (idempotent) and returns where it lives. */
    CompletableFuture<ChunkLocation> allocateChunk(String volumeName, long index);
}
