package io.fastblock.gateway.client;

import io.fastblock.gateway.GatewayConfig;
import io.fastblock.gateway.iscsi.TargetCatalog;
import io.fastblock.gateway.scsi.BlockDevice;
import io.fastblock.gateway.scsi.DeviceException;
import io.fastblock.protocol.Iqn;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The gateway's FAST client: the catalog of targets (one per volume) and the factory of open
 * volumes. Owns the namenode client and the storage connections shared by all volumes.
 */
public final class FastClient implements TargetCatalog, AutoCloseable {
    private final ClientSettings settings;
    private final MeterRegistry registry;
    private final NamenodeClient namenode;
    private final StorageClient storage;

    public FastClient(GatewayConfig config) {
        this(config, new SimpleMeterRegistry(), ClientSettings.defaults());
    }

    public FastClient(GatewayConfig config, MeterRegistry registry) {
        this(config, registry, ClientSettings.defaults());
    }

    public FastClient(GatewayConfig config, MeterRegistry registry, ClientSettings settings) {
        this.settings = settings;
        this.registry = registry;
        this.namenode = new NamenodeClient(config.namenodeUrls(), settings.namenodeTimeout(), settings.httpThreads());
        this.storage = new StorageClient(settings.requestTimeout(), settings.ioThreads());
    }

    @Override
    public CompletableFuture<List<String>> targetNames(String initiatorName) {
        CompletableFuture<List<String>> result = new CompletableFuture<>();
        namenode.listVolumes().whenComplete((volumes, err) -> {
            if (err != null) {
                result.completeExceptionally(unavailable("cannot list volumes", err));
            } else {
                result.complete(volumes.stream().map(v -> Iqn.forVolume(v.name())).toList());
            }
        });
        return result;
    }

    @Override
    public CompletableFuture<Optional<BlockDevice>> open(String targetName, String initiatorName) {
        String volume = Iqn.volumeOf(targetName);
        if (volume == null) {
            return CompletableFuture.completedFuture(Optional.empty());
        }
        CompletableFuture<Optional<BlockDevice>> result = new CompletableFuture<>();
        namenode.findVolume(volume).whenComplete((found, err) -> {
            if (err != null) {
                Throwable t = NamenodeClient.unwrap(err);
                // A name the namenode refuses as invalid cannot be a target either.
                if (t instanceof NamenodeException ne && ne.httpStatus() == 400) {
                    result.complete(Optional.empty());
                } else {
                    result.completeExceptionally(unavailable("cannot open " + targetName, err));
                }
                return;
            }
            try {
                result.complete(found.map(this::volume));
            } catch (RuntimeException e) {
                result.completeExceptionally(unavailable("cannot open " + targetName, e));
            }
        });
        return result;
    }

    /** Opens a volume by name; fails with {@link DeviceException} (UNAVAILABLE) if absent or unreachable. */
    public CompletableFuture<FastVolume> openVolume(String name) {
        CompletableFuture<FastVolume> result = new CompletableFuture<>();
        namenode.volume(name).whenComplete((info, err) -> {
            if (err != null) {
                result.completeExceptionally(unavailable("cannot open volume " + name, err));
            } else {
                result.complete(volume(info));
            }
        });
        return result;
    }

    /** A block device for a volume already described by the namenode. */
    public FastVolume volume(VolumeInfo info) {
        ChunkMapCache cache = new ChunkMapCache(info.name(), namenode, settings.unallocatedTtl());
        return new FastVolume(info, cache, storage, settings, new ClientMetrics(registry, info.name()),
                PooledByteBufAllocator.DEFAULT, namenode.executor());
    }

    public NamenodeClient namenode() {
        return namenode;
    }

    public StorageClient storage() {
        return storage;
    }

    public MeterRegistry meterRegistry() {
        return registry;
    }

    public ClientSettings settings() {
        return settings;
    }

    @Override
    public void close() {
        storage.close();
        namenode.close();
    }

    private static DeviceException unavailable(String what, Throwable err) {
        Throwable t = NamenodeClient.unwrap(err);
        return new DeviceException(DeviceException.Reason.UNAVAILABLE, what + ": " + t.getMessage(), t);
    }
}
