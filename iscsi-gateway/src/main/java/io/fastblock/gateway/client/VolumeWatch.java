package io.fastblock.gateway.client;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * An open volume's view of its layers at the namenode: its record on demand (after a write bumps
 * into a sealed layer) and a chunk-map cache per layer. The periodic reading of the record, which
 * makes an extend reach the initiator within seconds, is {@code FastClient}'s QoS poll.
 */
final class VolumeWatch implements LayerSource {
    private final NamenodeClient namenode;
    private final String volume;
    private final Duration unallocatedTtl;
    private final ChunkMapBudget budget;

    VolumeWatch(NamenodeClient namenode, String volume, Duration unallocatedTtl, ChunkMapBudget budget) {
        this.namenode = namenode;
        this.volume = volume;
        this.unallocatedTtl = unallocatedTtl;
        this.budget = budget;
    }

    @Override
    public CompletableFuture<VolumeInfo> refresh() {
        return namenode.volume(volume);
    }

    @Override
    public ChunkMapCache cache(long layer, boolean top) {
        return new ChunkMapCache(volume, new ChunkMapSource() {
            @Override
            public CompletableFuture<ChunkLocation> lookupChunk(String volumeName, long index) {
                return namenode.lookupChunk(volumeName, index, layer);
            }

            @Override
            public CompletableFuture<ChunkLocation> allocateChunk(String volumeName, long index) {
                if (!top) {
                    return CompletableFuture.failedFuture(new IllegalStateException("layer " + layer + " of "
                            + volumeName + " is sealed: nothing is allocated in it"));
                }
                return namenode.allocateChunk(volumeName, index, layer);
            }
        }, unallocatedTtl, budget);
    }
}
