package io.fastblock.namenode.meta;

import io.fastblock.namenode.capacity.ProvisionGuard;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.VolumeRecord;
import io.fastblock.protocol.meta.ZkPaths;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import io.fastblock.protocol.meta.QosSpec;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * Volume records under {@code /fastblock/volumes/{name}}.
 *
 * <p>Creation is one ZooKeeper transaction: create the volume znode, create its (empty) chunk map
 * parent, and advance the id counter with a versioned set. So a name is taken at most once even
 * when two requests race (the second create fails with NodeExists), and two volumes never share an
 * id (the second counter update fails on the version and retries with a fresh id). The same
 * transaction raises the provisioned total ({@link ProvisionedBytes}).
 */
public final class VolumeStore {
    public static final int BLOCK_SIZE = 512;
    public static final String STATE_AVAILABLE = "available";

    private final CuratorFramework zk;
    private final ProvisionedBytes provisioned;

    public VolumeStore(CuratorFramework zk) {
        this.zk = zk;
        this.provisioned = new ProvisionedBytes(zk);
    }

    public VolumeRecord create(String name, long size, long chunkSize) {
        return create(new NewVolume(name, size, chunkSize, null, null, null)).volume();
    }

    /** What a create asks for; {@code clientId} (nullable) makes the create idempotent. */
    public record NewVolume(String name, long size, long chunkSize, String tenant, QosSpec qos, String clientId) {
        public NewVolume {
            tenant = tenant == null || tenant.isEmpty() ? VolumeRecord.DEFAULT_TENANT : tenant;
            qos = qos == null ? QosSpec.UNLIMITED : qos;
        }

        /** Whether {@code v} is what this request would have created (id and times aside). */
        boolean describes(VolumeRecord v) {
            return v.name().equals(name) && v.size() == size && v.chunkSize() == chunkSize
                    && v.tenant().equals(tenant) && v.qos().equals(qos);
        }
    }

    /** The volume and whether this call created it (false: an earlier create with the same client id did). */
    public record Created(VolumeRecord volume, boolean created) {
    }

    /**
     * Creates a volume. With a client id the create is idempotent: the id is claimed in the same
     * transaction as the name, so a repeat with the same id and the same request returns the
     * volume it created ({@code created} false), and a repeat with the same id but a different
     * request fails with {@link IdempotencyConflictException}.
     */
    public Created create(NewVolume req) {
        return create(req, ProvisionGuard.NONE);
    }

    /**
     * As {@link #create(NewVolume)}, admitting the size with {@code guard} against the provisioned
     * total read in the same step that raises it (a repeat of an earlier create is not asked again).
     *
     * @throws io.fastblock.namenode.capacity.InsufficientCapacityException when the guard refuses
     */
    public Created create(NewVolume req, ProvisionGuard guard) {
        String name = req.name();
        String createdAt = Instant.now().truncatedTo(ChronoUnit.MILLIS).toString();
        while (true) {
            if (req.clientId() != null) {
                Optional<Created> earlier = earlierCreate(req);
                if (earlier.isPresent()) {
                    return earlier.get();
                }
            }
            Stat counterStat = new Stat();
            long id;
            try {
                byte[] raw = ZkCalls.run("read volume id counter",
                        () -> zk.getData().storingStatIn(counterStat).forPath(ZkPaths.VOLUME_ID_COUNTER));
                id = Long.parseLong(new String(raw, StandardCharsets.US_ASCII).trim());
            } catch (KeeperException.NoNodeException e) {
                ZkSchema.ensure(zk);
                continue;
            } catch (KeeperException e) {
                throw ZkCalls.unexpected("read volume id counter", e);
            }
            ProvisionedBytes.Reading total = provisioned.admit(guard, req.size());
            VolumeRecord record = new VolumeRecord(id, name, req.size(), BLOCK_SIZE, req.chunkSize(), STATE_AVAILABLE,
                    createdAt, req.tenant(), req.qos(), req.clientId());
            byte[] next = Long.toString(id + 1).getBytes(StandardCharsets.US_ASCII);
            try {
                ZkCalls.run("create volume " + name, () -> {
                    List<CuratorOp> ops = new ArrayList<>();
                    ops.add(zk.transactionOp().create().forPath(ZkPaths.volume(name), MetaJson.write(record)));
                    ops.add(zk.transactionOp().create().forPath(ZkPaths.chunkMap(name)));
                    ops.add(zk.transactionOp().create().forPath(ZkPaths.exports(name)));
                    ops.add(zk.transactionOp().setData().withVersion(counterStat.getVersion())
                            .forPath(ZkPaths.VOLUME_ID_COUNTER, next));
                    ops.add(provisioned.add(total, req.size()));
                    if (req.clientId() != null) {
                        ops.add(zk.transactionOp().create().forPath(ZkPaths.clientId(req.clientId()),
                                name.getBytes(StandardCharsets.UTF_8)));
                    }
                    return zk.transaction().forOperations(ops);
                });
                return new Created(record, true);
            } catch (KeeperException.NodeExistsException e) {
                if (req.clientId() != null && clientIdOwner(req.clientId()).isPresent()) {
                    continue; // the id was claimed meanwhile: answer as a repeat of that create
                }
                throw new VolumeExistsException(name);
            } catch (KeeperException.BadVersionException e) {
                // Another create took this id (or changed the provisioned total) first; read the counters again.
            } catch (KeeperException.NoNodeException e) {
                ZkSchema.ensure(zk);
            } catch (KeeperException e) {
                throw ZkCalls.unexpected("create volume " + name, e);
            }
        }
    }

    private Optional<Created> earlierCreate(NewVolume req) {
        return earlierCreate(req, false).map(v -> new Created(v, false));
    }

    /**
     * The volume an earlier create with {@code req}'s client id made, if it still exists; a clone
     * ({@code clone}) takes its chunk size (and, when none was asked, its size) from the source.
     */
    Optional<VolumeRecord> earlierCreate(NewVolume req, boolean clone) {
        Optional<String> owner = clientIdOwner(req.clientId());
        if (owner.isEmpty()) {
            return Optional.empty();
        }
        Optional<VolumeRecord> v = get(owner.get()).filter(r -> req.clientId().equals(r.clientId()));
        if (v.isEmpty()) {
            return Optional.empty(); // the volume was deleted meanwhile and its id released
        }
        VolumeRecord r = v.get();
        boolean same = clone
                ? r.name().equals(req.name()) && (req.size() <= 0 || r.size() == req.size())
                        && r.tenant().equals(req.tenant()) && r.qos().equals(req.qos()) && r.source() != null
                : req.describes(r) && r.source() == null;
        if (!same) {
            throw new IdempotencyConflictException(req.clientId(), r);
        }
        return Optional.of(r);
    }

    boolean clientIdTaken(String clientId) {
        return clientIdOwner(clientId).isPresent();
    }

    private Optional<String> clientIdOwner(String clientId) {
        try {
            byte[] raw = ZkCalls.run("read client id", () -> zk.getData().forPath(ZkPaths.clientId(clientId)));
            return Optional.of(new String(raw, StandardCharsets.UTF_8));
        } catch (KeeperException.NoNodeException e) {
            return Optional.empty();
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("read client id", e);
        }
    }

    public Optional<VolumeRecord> get(String name) {
        try {
            byte[] raw = ZkCalls.run("read volume " + name, () -> zk.getData().forPath(ZkPaths.volume(name)));
            return Optional.of(MetaJson.read(raw, VolumeRecord.class));
        } catch (KeeperException.NoNodeException e) {
            return Optional.empty();
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("read volume " + name, e);
        }
    }

    /** The sum of all volume sizes, from its counter (one read; rebuilt from the records if missing). */
    public long provisionedBytes() {
        return provisioned.get();
    }

    public VolumeRecord require(String name) {
        return get(name).orElseThrow(() -> new VolumeNotFoundException(name));
    }

    /** All volumes, oldest (lowest id) first. */
    public List<VolumeRecord> list() {
        List<String> names;
        try {
            names = ZkCalls.run("list volumes", () -> zk.getChildren().forPath(ZkPaths.VOLUMES));
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("list volumes", e);
        }
        List<VolumeRecord> out = readAll(names);
        out.sort(Comparator.comparingLong(VolumeRecord::id));
        return out;
    }

    /**
     * Reads the records of {@code names} with every read in flight at once (one round trip's wait,
     * not one per volume: the capacity check of every create lists all volumes). A volume deleted
     * meanwhile is simply left out.
     */
    private List<VolumeRecord> readAll(List<String> names) {
        ZkReads reads = new ZkReads(zk, "list volumes");
        int[] slots = names.stream().mapToInt(n -> reads.data(ZkPaths.volume(n))).toArray();
        reads.run();
        List<VolumeRecord> out = new ArrayList<>(names.size());
        for (int slot : slots) {
            byte[] raw = reads.data(slot);
            if (raw != null) {
                out.add(MetaJson.read(raw, VolumeRecord.class));
            }
        }
        return out;
    }

    /**
     * Removes the volume's znodes in one transaction ({@link LayerStacks#deleteVolume}), which also
     * seals its top layer and queues its unshared layers for reclaim. Returns false if there was no
     * such volume.
     *
     * @throws LayerConflictException {@code VOLUME_HAS_SNAPSHOTS} while it has snapshots
     */
    public boolean delete(String name) {
        Optional<VolumeRecord> record = new LayerStacks(zk).deleteVolume(name);
        boolean deleted = record.isPresent();
        if (deleted && record.get().clientId() != null) {
            // Releases the client id only if it still names this volume (never another's claim).
            String idPath = ZkPaths.clientId(record.get().clientId());
            try {
                Stat stat = new Stat();
                byte[] raw = ZkCalls.run("read client id", () -> zk.getData().storingStatIn(stat).forPath(idPath));
                if (name.equals(new String(raw, StandardCharsets.UTF_8))) {
                    ZkCalls.run("release client id", () -> zk.delete().withVersion(stat.getVersion()).forPath(idPath));
                }
            } catch (KeeperException.NoNodeException | KeeperException.BadVersionException e) {
                // already released or re-claimed
            } catch (KeeperException e) {
                throw ZkCalls.unexpected("release client id of " + name, e);
            }
        }
        return deleted;
    }
}
