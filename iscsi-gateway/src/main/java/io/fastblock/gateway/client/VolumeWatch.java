package io.fastblock.gateway.client;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps an open volume in step with the namenode: every {@code every} it reads the volume record
 * and hands it to {@link FastVolume#refreshed}, so an extend reaches the initiator (unit attention)
 * within seconds and a snapshot's new top layer is known before the first write bumps into the
 * sealed one. Stops by itself once the volume is closed.
 */
final class VolumeWatch implements LayerSource {
    private static final Logger LOG = LoggerFactory.getLogger(VolumeWatch.class);
    private final NamenodeClient namenode;
    private final String volume;
    private final Duration unallocatedTtl;
    private ScheduledFuture<?> task;

    VolumeWatch(NamenodeClient namenode, String volume, Duration unallocatedTtl) {
        this.namenode = namenode;
        this.volume = volume;
        this.unallocatedTtl = unallocatedTtl;
    }

    synchronized void start(FastVolume v, ScheduledExecutorService timer, Duration every) {
        task = timer.scheduleWithFixedDelay(() -> {
            if (v.isClosed()) {
                stop();
                return;
            }
            refresh().whenComplete((fresh, err) -> {
                if (err != null) {
                    LOG.debug("refreshing volume {}: {}", volume, NamenodeClient.unwrap(err).toString());
                } else if (!v.isClosed()) {
                    v.refreshed(fresh);
                }
            });
        }, every.toMillis(), every.toMillis(), TimeUnit.MILLISECONDS);
    }

    synchronized void stop() {
        if (task != null) {
            task.cancel(false);
        }
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
        }, unallocatedTtl);
    }
}
