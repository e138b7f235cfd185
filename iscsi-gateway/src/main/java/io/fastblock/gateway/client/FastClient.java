package io.fastblock.gateway.client;

import io.fastblock.gateway.GatewayConfig;
import io.fastblock.gateway.qos.QosRegistry;
import io.fastblock.gateway.iscsi.TargetAccess;
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
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/**
 * The gateway's FAST client: the catalog of targets (one per volume) and the factory of open
 * volumes. Owns the namenode client and the storage connections shared by all volumes.
 */
public final class FastClient implements TargetCatalog, AutoCloseable {
    private final ClientSettings settings;
    private final MeterRegistry registry;
    private final NamenodeClient namenode;
    private final StorageClient storage;
    private final String gatewayId;
    private final GatewayConfig.Timers timers;
    /** {@code --read-ahead}: 0 for none. */
    private final int readAheadBytes;
    /** Read-ahead windows of all open volumes: a quarter of {@code --data-memory}. */
    private final ReadAhead.Budget readAheadMemory;
    /** The chunk-map entries of all this gateway's volumes together. */
    private final ChunkMapBudget chunkMaps;
    /** Windows a device holds at once: two for each of four sequential streams. */
    static final int READ_AHEAD_WINDOWS = 8;
    /**
     * How long a window may answer reads after it was read. A stream that takes longer to read it
     * gains nothing from it, and it bounds how long a write by another gateway (which this one does
     * not see) could be missed by a window read before it.
     */
    static final java.time.Duration READ_AHEAD_AGE = java.time.Duration.ofSeconds(1);
    /** Admits throttled commands at their time; one thread, it only completes futures. */
    private final ScheduledExecutorService qosTimer = Executors.newSingleThreadScheduledExecutor(
            NamenodeClient.daemonThreads("qos-timer"));
    private final QosRegistry qos;
    private final ScheduledExecutorService leaseTimer = Executors.newSingleThreadScheduledExecutor(
            NamenodeClient.daemonThreads("lease-renewal"));

    public FastClient(GatewayConfig config) {
        this(config, new SimpleMeterRegistry());
    }

    public FastClient(GatewayConfig config, MeterRegistry registry) {
        this(config, registry, settingsOf(config.timers()));
    }

    /** The client's defaults with the gateway's storage timers (per-attempt timeout, retry budget). */
    static ClientSettings settingsOf(GatewayConfig.Timers t) {
        ClientSettings d = ClientSettings.defaults();
        return new ClientSettings(t.requestTimeout(), d.maxAttempts(), d.retryBackoff(), t.retryBudget(),
                d.unallocatedTtl(), d.streamsPerVolume(), d.streamGapBytes(), d.sequentialAfter(), d.maxRequestBytes(),
                d.ioThreads(), d.httpThreads(), d.namenodeTimeout());
    }

    public FastClient(GatewayConfig config, MeterRegistry registry, ClientSettings settings) {
        this.settings = settings;
        this.timers = config.timers();
        this.readAheadBytes = config.readAhead();
        this.readAheadMemory = new ReadAhead.Budget(config.dataMemory() / 4);
        this.chunkMaps = new ChunkMapBudget(config.chunkMapEntries());
        ClientMetrics.bindChunkMaps(registry, chunkMaps);
        this.registry = registry;
        this.namenode = new NamenodeClient(config.namenodeUrls(), settings.namenodeTimeout(), settings.httpThreads());
        this.storage = new StorageClient(settings.requestTimeout(), settings.ioThreads());
        this.gatewayId = gatewayIdOf(config.portalAddress());
        // One read of the volume record per open volume and period feeds both its QoS limits and its
        // devices (size, layers), instead of a poll for each.
        this.qos = new QosRegistry(this::pollVolume, qosTimer, timers.qosPoll());
    }

    /** This gateway's id in write leases: its portal address, which is unique per gateway. */
    static String gatewayIdOf(String portal) {
        String id = "gw-" + portal.replaceAll("[^A-Za-z0-9._:-]", "-");
        return id.length() > 128 ? id.substring(0, 128) : id;
    }

    public String gatewayId() {
        return gatewayId;
    }

    /**
     * The namenode's export records decide: the initiator's own export, else an open ("*") one;
     * none means no login. An unreachable namenode fails the future (the login layer answers
     * "service unavailable" rather than refusing for good).
     */
    @Override
    public CompletableFuture<TargetAccess> access(String targetName, String initiatorName) {
        return namenode.access(targetName, initiatorName).handle((a, err) -> {
            if (err != null) {
                throw unavailable("cannot check access to " + targetName, err);
            }
            if (!a.allowed()) {
                return TargetAccess.DENIED;
            }
            if (a.chap() == null) {
                return TargetAccess.OPEN;
            }
            return TargetAccess.chap(new TargetAccess.Chap(a.chap().user(), a.chap().secret(), a.chap().targetUser(),
                    a.chap().targetSecret()));
        });
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
            if (found.isEmpty()) {
                result.complete(Optional.empty());
                return;
            }
            withKnownEpoch(found.get()).whenComplete((v, e) -> {
                if (e != null) {
                    result.completeExceptionally(unavailable("cannot open " + targetName, e));
                } else {
                    result.complete(Optional.of(v));
                }
            });
        });
        return result;
    }

    /** Opens a volume by name; fails with {@link DeviceException} (UNAVAILABLE) if absent or unreachable. */
    public CompletableFuture<FastVolume> openVolume(String name) {
        CompletableFuture<FastVolume> result = new CompletableFuture<>();
        namenode.volume(name).whenComplete((info, err) -> {
            if (err != null) {
                result.completeExceptionally(unavailable("cannot open volume " + name, err));
                return;
            }
            withKnownEpoch(info).whenComplete((v, e) -> {
                if (e != null) {
                    result.completeExceptionally(unavailable("cannot open volume " + name, e));
                } else {
                    result.complete(v);
                }
            });
        });
        return result;
    }

    /**
     * The volume, reading with its current lease epoch (storage servers refuse older ones). A
     * namenode that cannot tell (an older one without the route) leaves it at 0: the first stale
     * answer makes the volume ask again.
     */
    private CompletableFuture<FastVolume> withKnownEpoch(VolumeInfo info) {
        FastVolume v = volume(info);
        return namenode.currentLease(info.name()).handle((lease, err) -> {
            if (lease != null) {
                v.leaseEpoch(lease.epoch());
            }
            return v;
        });
    }

    /** A block device for a volume already described by the namenode; its writes take the volume's write lease. */
    public FastVolume volume(VolumeInfo info) {
        VolumeWatch watch = new VolumeWatch(namenode, info.name(), settings.unallocatedTtl(), chunkMaps);
        // Every map names its layer: an allocation for a layer a snapshot sealed is refused (STALE_LAYER).
        FastVolume v = new FastVolume(info, watch.cache(info.topLayer(), true), storage, settings,
                acquireMetrics(info.name()), PooledByteBufAllocator.DEFAULT, namenode.executor());
        v.useLease(new VolumeLease(namenode, info.name(), gatewayId, leaseTimer, v::leaseLost, timers.leaseRenewal()));
        QosRegistry.Handle limits = qos.acquire(info.name());
        v.useAdmission(limits.throttle(), () -> { // run once: FastVolume.close closes once
            try {
                limits.close();
            } finally {
                releaseMetrics(info.name(), v);
            }
        });
        v.useLayers(watch);
        if (readAheadBytes > 0) {
            // A change through one device of the volume (another session, a multipath path) drops what
            // the others read ahead of it.
            v.useReadAhead(readAheadBytes, READ_AHEAD_WINDOWS, READ_AHEAD_AGE, readAheadMemory, (offset, length) -> {
                OpenVolume opened = open.get(info.name());
                java.util.Set<FastVolume> devices = opened == null ? java.util.Set.of() : opened.devices;
                if (devices.size() < 2) {
                    return;
                }
                for (FastVolume other : devices) {
                    if (other != v) {
                        other.invalidateReadAhead(offset, length);
                    }
                }
            });
        }
        open.get(info.name()).devices.add(v); // acquired above: the entry stays until v is released
        return v;
    }

    /**
     * A volume open on this gateway: its devices (sessions, multipath paths), which get every fresh
     * record the QoS poll reads, and the meters they share. {@code users} counts the devices from
     * their construction on (a device joins {@code devices} once it is set up); the last release
     * removes the entry and the volume's meters.
     */
    private static final class OpenVolume {
        final java.util.Set<FastVolume> devices = java.util.concurrent.ConcurrentHashMap.newKeySet();
        final ClientMetrics metrics;
        int users; // guarded by open

        OpenVolume(ClientMetrics metrics) {
            this.metrics = metrics;
        }
    }

    private final java.util.Map<String, OpenVolume> open = new java.util.concurrent.ConcurrentHashMap<>();

    private ClientMetrics acquireMetrics(String volume) {
        synchronized (open) {
            OpenVolume opened = open.computeIfAbsent(volume, n -> new OpenVolume(new ClientMetrics(registry, n)));
            opened.users++;
            return opened.metrics;
        }
    }

    /** {@code device} closed: when it was the volume's last on this gateway, the volume and its meters go. */
    private void releaseMetrics(String volume, FastVolume device) {
        synchronized (open) {
            OpenVolume opened = open.get(volume);
            if (opened == null) {
                return;
            }
            opened.devices.remove(device);
            if (--opened.users == 0) {
                open.remove(volume);
                opened.metrics.remove();
            }
        }
    }

    /**
     * Reads a volume's record (every {@code --qos-poll} while it is open): its QoS goes to the
     * volume's throttle, its size and layers to its open devices, so an extend (unit attention) or a
     * snapshot's new top layer is noticed within a period.
     */
    private CompletableFuture<io.fastblock.protocol.meta.QosSpec> pollVolume(String name) {
        return namenode.volume(name).thenApply(fresh -> {
            OpenVolume opened = open.get(name);
            if (opened == null) {
                return fresh.qos();
            }
            for (FastVolume v : opened.devices) {
                v.refreshed(fresh);
                v.expireReadAhead();
            }
            return fresh.qos();
        });
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

    public QosRegistry qos() {
        return qos;
    }

    @Override
    public void close() {
        leaseTimer.shutdownNow();
        qosTimer.shutdownNow();
        storage.close();
        namenode.close();
    }

    private static DeviceException unavailable(String what, Throwable err) {
        Throwable t = NamenodeClient.unwrap(err);
        return new DeviceException(DeviceException.Reason.UNAVAILABLE, what + ": " + t.getMessage(), t);
    }
}
