package io.fastblock.gateway.client;

import java.util.concurrent.CompletableFuture;

/** Where an open volume learns its layers and their chunk maps: the namenode in production. */
public interface LayerSource {
    /**
     * A chunk map cache for one layer of the volume; for the top layer its allocations name the
     * layer, so the namenode refuses them (STALE_LAYER) once a snapshot sealed it.
     */
    ChunkMapCache cache(long layer, boolean top);

    /** The volume as the namenode has it now (size, layer stack). */
    CompletableFuture<VolumeInfo> refresh();
}
