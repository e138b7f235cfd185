package io.fastblock.namenode.meta;

import io.fastblock.namenode.capacity.ProvisionGuard;
import io.fastblock.protocol.meta.LayerRecord;
import io.fastblock.protocol.meta.LeaseRecord;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.ReclaimRecord;
import io.fastblock.protocol.meta.SnapshotRecord;
import io.fastblock.protocol.meta.VolumeRecord;
import io.fastblock.protocol.meta.VolumeSource;
import io.fastblock.protocol.meta.ZkPaths;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * Every change of a volume's layer stack (docs/snapshots.md): snapshot, clone, revert, snapshot
 * and volume deletion. Each is ONE ZooKeeper transaction built from versioned reads, so it is
 * applied whole or not at all (a namenode killed at any point leaves either the complete result or
 * nothing), and a concurrent change of anything it decided on makes it fail and decide again.
 *
 * <p>The transaction also records what must follow it: the seal of the layer that stops taking
 * writes ({@code /fastblock/fences/{layer}} = Long.MAX_VALUE, which storage servers load and
 * watch) and the space to give back ({@code /fastblock/reclaim/r-*}). The caller then sends FENCE
 * to the storage servers (so the API answers only once no write can still land in the sealed
 * layer) and the leader's reclaimer trims what the reclaim records name.
 */
public final class LayerStacks {
    private final CuratorFramework zk;

    public LayerStacks(CuratorFramework zk) {
        this.zk = zk;
    }

    /** A snapshot and whether this call made it ({@code false}: a repeat with the same client id); the sealed layer. */
    public record Snapshotted(SnapshotRecord snapshot, boolean created, long sealedLayer) {
    }

    /** A volume after a change of its stack, and the layer that the change sealed (to FENCE), or -1. */
    public record Changed(VolumeRecord volume, boolean created, long sealedLayer) {
    }

    // ---------------------------------------------------------------- snapshots

    public Snapshotted createSnapshot(String volume, String name, String clientId) {
        String createdAt = now();
        while (true) {
            Stat vs = new Stat();
            VolumeRecord v = readVolume(volume, vs).orElseThrow(() -> new VolumeNotFoundException(volume));
            Optional<SnapshotRecord> existing = snapshot(volume, name);
            if (existing.isPresent()) {
                if (clientId != null && clientId.equals(existing.get().clientId())) {
                    return new Snapshotted(existing.get(), false, existing.get().topLayer());
                }
                throw new SnapshotExistsException(volume, name);
            }
            Tx tx = new Tx();
            long newTop = tx.takeIds(1);
            tx.moveLegacyMap(v);
            tx.addLayer(newTop, volume, v.chunkSize(), createdAt);
            tx.ensure(ZkPaths.snapshots(volume));
            SnapshotRecord s = new SnapshotRecord(name, volume, clientId, v.size(), createdAt,
                    SnapshotRecord.AVAILABLE, v.layerStack());
            tx.add(() -> zk.transactionOp().create().forPath(ZkPaths.snapshot(volume, name), MetaJson.write(s)));
            tx.add(() -> zk.transactionOp().setData().withVersion(vs.getVersion())
                    .forPath(ZkPaths.volume(volume), MetaJson.write(v.withLayers(plus(v.layerStack(), newTop)))));
            tx.seal(v.topLayer());
            tx.carryLease(v, newTop);
            if (tx.commit("snapshot " + volume + "/" + name)) {
                return new Snapshotted(s, true, v.topLayer());
            }
        }
    }

    /** The volume's snapshots, oldest first. */
    public List<SnapshotRecord> snapshots(String volume) {
        if (readVolume(volume, null).isEmpty()) {
            throw new VolumeNotFoundException(volume);
        }
        List<String> names = children(ZkPaths.snapshots(volume));
        List<SnapshotRecord> out = new ArrayList<>();
        for (String n : names) {
            snapshot(volume, n).ifPresent(out::add);
        }
        // Layer ids only grow, so the top layer orders snapshots by creation even within one millisecond.
        out.sort(Comparator.comparingLong(SnapshotRecord::topLayer));
        return out;
    }

    public Optional<SnapshotRecord> snapshot(String volume, String name) {
        return read(ZkPaths.snapshot(volume, name), null, SnapshotRecord.class);
    }

    /**
     * Deletes a snapshot. Clones made from it keep its layers (they reference them). A layer of it
     * that is now used by the volume alone keeps only what the layers above it do not cover: that
     * part is queued for trimming.
     */
    public void deleteSnapshot(String volume, String name) {
        while (true) {
            Stat vs = new Stat();
            VolumeRecord v = readVolume(volume, vs).orElseThrow(() -> new VolumeNotFoundException(volume));
            Stat ss = new Stat();
            SnapshotRecord s = read(ZkPaths.snapshot(volume, name), ss, SnapshotRecord.class)
                    .orElseThrow(() -> new SnapshotNotFoundException(volume, name));
            Set<Long> usedElsewhere = references(volume, name);
            Tx tx = new Tx();
            tx.add(() -> zk.transactionOp().delete().withVersion(ss.getVersion()).forPath(ZkPaths.snapshot(volume, name)));
            tx.add(() -> zk.transactionOp().check().withVersion(vs.getVersion()).forPath(ZkPaths.volume(volume)));
            List<Long> stack = v.layerStack();
            for (long layer : s.layers()) {
                int at = stack.indexOf(layer);
                if (usedElsewhere.contains(layer) || at < 0) {
                    continue;
                }
                List<Long> above = stack.subList(at + 1, stack.size());
                if (!above.isEmpty()) {
                    tx.reclaim(new ReclaimRecord(layer, above, "snapshot " + volume + "/" + name + " deleted"));
                }
            }
            if (tx.commit("delete snapshot " + volume + "/" + name)) {
                return;
            }
        }
    }

    /**
     * Reverts the volume to its latest snapshot: the stack becomes the snapshot's layers plus a new
     * empty top; the old top is sealed and, used by nothing else, queued for reclaim.
     */
    public Changed revert(String volume, String name) {
        while (true) {
            Stat vs = new Stat();
            VolumeRecord v = readVolume(volume, vs).orElseThrow(() -> new VolumeNotFoundException(volume));
            SnapshotRecord s = snapshot(volume, name).orElseThrow(() -> new SnapshotNotFoundException(volume, name));
            List<SnapshotRecord> all = snapshots(volume);
            SnapshotRecord latest = all.get(all.size() - 1);
            if (!latest.name().equals(name)) {
                throw new LayerConflictException("NOT_LATEST_SNAPSHOT", "volume '" + volume + "' can only be"
                        + " reverted to its latest snapshot, '" + latest.name() + "', not '" + name + "'");
            }
            Tx tx = new Tx();
            long newTop = tx.takeIds(1);
            tx.addLayer(newTop, volume, v.chunkSize(), now());
            Set<Long> usedElsewhere = references(volume, null);
            usedElsewhere.addAll(s.layers());
            for (long layer : v.layerStack()) {
                if (!usedElsewhere.contains(layer)) {
                    tx.reclaim(new ReclaimRecord(layer, List.of(), "volume " + volume + " reverted to " + name));
                }
            }
            VolumeRecord after = v.withLayers(plus(s.layers(), newTop));
            tx.add(() -> zk.transactionOp().setData().withVersion(vs.getVersion())
                    .forPath(ZkPaths.volume(volume), MetaJson.write(after)));
            tx.seal(v.topLayer());
            tx.carryLease(v, newTop);
            if (tx.commit("revert " + volume + " to " + name)) {
                return new Changed(after, true, v.topLayer());
            }
        }
    }

    // ---------------------------------------------------------------- clones

    /**
     * Creates volume {@code req} on top of {@code source}'s data: a snapshot's layers, or a volume's
     * current layers (then the source volume gets a new empty top, as for a snapshot, and its old
     * top is sealed: {@code sealedLayer}). The clone's own top layer has the clone's id. Size at
     * least the source's; chunk size always the source's (layers share the chunk geometry).
     *
     * @throws SourceNotFoundException if the snapshot or volume does not exist
     */
    public Changed createClone(VolumeStore.NewVolume req, VolumeSource source) {
        return createClone(req, source, ProvisionGuard.NONE);
    }

    /** As {@link #createClone(VolumeStore.NewVolume, VolumeSource)}, the clone's size admitted by {@code guard}. */
    public Changed createClone(VolumeStore.NewVolume req, VolumeSource source, ProvisionGuard guard) {
        String createdAt = now();
        while (true) {
            if (req.clientId() != null) {
                Optional<VolumeRecord> earlier = new VolumeStore(zk).earlierCreate(req, true);
                if (earlier.isPresent()) {
                    return new Changed(earlier.get(), false, -1);
                }
            }
            Tx tx = new Tx();
            List<Long> base;
            long chunkSize;
            long sourceSize;
            long sealed = -1;
            long id;
            if (source.snapshot() != null) {
                Stat ss = new Stat();
                SnapshotRecord s = read(ZkPaths.snapshot(source.volume(), source.snapshot()), ss, SnapshotRecord.class)
                        .orElseThrow(() -> new SourceNotFoundException("snapshot '" + source.volume() + "/"
                                + source.snapshot() + "' does not exist"));
                VolumeRecord owner = readVolume(source.volume(), null).orElseThrow(
                        () -> new SourceNotFoundException("volume '" + source.volume() + "' does not exist"));
                id = tx.takeIds(1);
                base = s.layers();
                chunkSize = owner.chunkSize();
                sourceSize = s.size();
                // Rewriting the snapshot (same data) bumps its version: a concurrent delete, which
                // decided what to reclaim without knowing this clone, fails and decides again.
                tx.add(() -> zk.transactionOp().setData().withVersion(ss.getVersion())
                        .forPath(ZkPaths.snapshot(source.volume(), source.snapshot()), MetaJson.write(s)));
            } else {
                Stat vs = new Stat();
                VolumeRecord src = readVolume(source.volume(), vs).orElseThrow(
                        () -> new SourceNotFoundException("volume '" + source.volume() + "' does not exist"));
                id = tx.takeIds(2);
                long srcTop = id + 1;
                base = src.layerStack();
                chunkSize = src.chunkSize();
                sourceSize = src.size();
                tx.moveLegacyMap(src);
                tx.addLayer(srcTop, src.name(), chunkSize, createdAt);
                tx.add(() -> zk.transactionOp().setData().withVersion(vs.getVersion()).forPath(
                        ZkPaths.volume(src.name()), MetaJson.write(src.withLayers(plus(base, srcTop)))));
                tx.seal(src.topLayer());
                tx.carryLease(src, srcTop);
                sealed = src.topLayer();
            }
            long size = req.size() <= 0 ? sourceSize : req.size();
            if (size < sourceSize) {
                throw new IllegalArgumentException("a clone of " + describe(source) + " must be at least "
                        + sourceSize + " bytes, got " + size);
            }
            tx.provision(guard, size);
            VolumeRecord record = new VolumeRecord(id, req.name(), size, VolumeStore.BLOCK_SIZE, chunkSize,
                    VolumeStore.STATE_AVAILABLE, createdAt, req.tenant(), req.qos(), req.clientId(), plus(base, id),
                    source);
            tx.add(() -> zk.transactionOp().create().forPath(ZkPaths.volume(req.name()), MetaJson.write(record)));
            tx.add(() -> zk.transactionOp().create().forPath(ZkPaths.chunkMap(req.name())));
            tx.add(() -> zk.transactionOp().create().forPath(ZkPaths.exports(req.name())));
            tx.add(() -> zk.transactionOp().create().forPath(ZkPaths.snapshots(req.name())));
            tx.addLayer(id, req.name(), chunkSize, createdAt);
            if (req.clientId() != null) {
                tx.add(() -> zk.transactionOp().create().forPath(ZkPaths.clientId(req.clientId()),
                        req.name().getBytes(StandardCharsets.UTF_8)));
            }
            try {
                if (tx.commitOrThrow("clone " + req.name())) {
                    return new Changed(record, true, sealed);
                }
            } catch (KeeperException.NodeExistsException e) {
                if (readVolume(req.name(), null).isPresent() && (req.clientId() == null
                        || !new VolumeStore(zk).clientIdTaken(req.clientId()))) {
                    throw new VolumeExistsException(req.name());
                }
                // the client id or a layer raced: decide again
            }
        }
    }

    private static String describe(VolumeSource s) {
        return s.snapshot() == null ? "volume '" + s.volume() + "'" : "snapshot '" + s.volume() + "/" + s.snapshot() + "'";
    }

    // ---------------------------------------------------------------- volume deletion

    /**
     * Deletes a volume without snapshots in one transaction: its znodes go, its top layer is sealed,
     * and its layers that no other volume or snapshot uses are queued for reclaim.
     *
     * @return the deleted record, or empty if there was no such volume
     * @throws LayerConflictException {@code VOLUME_HAS_SNAPSHOTS} while it has snapshots
     */
    public Optional<VolumeRecord> deleteVolume(String name) {
        while (true) {
            Stat vs = new Stat();
            Optional<VolumeRecord> found = readVolume(name, vs);
            if (found.isEmpty()) {
                return Optional.empty();
            }
            VolumeRecord v = found.get();
            List<String> snaps = children(ZkPaths.snapshots(name));
            if (!snaps.isEmpty()) {
                throw new LayerConflictException("VOLUME_HAS_SNAPSHOTS", "volume '" + name + "' has snapshots "
                        + String.join(", ", new java.util.TreeSet<>(snaps)) + "; delete them first");
            }
            Tx tx = new Tx();
            tx.moveLegacyMap(v);
            Set<Long> usedElsewhere = references(name, null);
            for (long layer : v.layerStack()) {
                if (!usedElsewhere.contains(layer)) {
                    tx.reclaim(new ReclaimRecord(layer, List.of(), "volume " + name + " deleted"));
                }
            }
            tx.seal(v.topLayer());
            tx.provision(ProvisionGuard.NONE, -v.size());
            for (String e : children(ZkPaths.exports(name))) {
                tx.add(() -> zk.transactionOp().delete().forPath(ZkPaths.exports(name) + "/" + e));
            }
            tx.deleteIfExists(ZkPaths.exports(name));
            tx.deleteIfExists(ZkPaths.snapshots(name));
            if (v.layered()) {
                // A layered volume's own chunkmap znode stays empty (maps are under /fastblock/layers).
                for (String b : children(ZkPaths.chunkMap(name))) {
                    tx.add(() -> zk.transactionOp().delete().forPath(ZkPaths.chunkMap(name) + "/" + b));
                }
            }
            tx.deleteIfExists(ZkPaths.chunkMap(name));
            tx.add(() -> zk.transactionOp().delete().withVersion(vs.getVersion()).forPath(ZkPaths.volume(name)));
            if (tx.commit("delete volume " + name)) {
                return Optional.of(v);
            }
        }
    }

    // ---------------------------------------------------------------- extend

    /** Grows the volume to {@code size} bytes (never shrinks: IllegalArgumentException). */
    public VolumeRecord extend(String name, long size) {
        return extend(name, size, ProvisionGuard.NONE);
    }

    /** As {@link #extend(String, long)}, the growth admitted by {@code guard}; raises the provisioned total with it. */
    public VolumeRecord extend(String name, long size, ProvisionGuard guard) {
        while (true) {
            Stat vs = new Stat();
            VolumeRecord v = readVolume(name, vs).orElseThrow(() -> new VolumeNotFoundException(name));
            if (size <= v.size()) {
                throw new IllegalArgumentException("volume '" + name + "' is " + v.size() + " bytes; the new size ("
                        + size + ") must be larger");
            }
            VolumeRecord after = v.withSize(size);
            Tx tx = new Tx();
            tx.provision(guard, size - v.size());
            // changed meanwhile (an allocation check does not bump it; a snapshot does): again
            tx.add(() -> zk.transactionOp().setData().withVersion(vs.getVersion())
                    .forPath(ZkPaths.volume(name), MetaJson.write(after)));
            if (tx.commit("extend " + name)) {
                return after;
            }
        }
    }

    // ---------------------------------------------------------------- helpers

    /**
     * Layers referenced by any volume stack or snapshot other than volume {@code volume}'s own stack
     * and (when {@code exceptSnapshot} is set) that snapshot of it.
     */
    Set<Long> references(String volume, String exceptSnapshot) {
        Set<Long> used = new HashSet<>();
        for (String name : children(ZkPaths.VOLUMES)) {
            if (!name.equals(volume)) {
                readVolume(name, null).ifPresent(v -> used.addAll(v.layerStack()));
            }
            for (String snap : children(ZkPaths.snapshots(name))) {
                if (name.equals(volume) && snap.equals(exceptSnapshot)) {
                    continue;
                }
                snapshot(name, snap).ifPresent(s -> used.addAll(s.layers()));
            }
        }
        return used;
    }

    private Optional<VolumeRecord> readVolume(String name, Stat stat) {
        return read(ZkPaths.volume(name), stat, VolumeRecord.class);
    }

    private <T> Optional<T> read(String path, Stat stat, Class<T> type) {
        try {
            byte[] raw = ZkCalls.run("read " + path, () -> stat == null ? zk.getData().forPath(path)
                    : zk.getData().storingStatIn(stat).forPath(path));
            return Optional.of(MetaJson.read(raw, type));
        } catch (KeeperException.NoNodeException e) {
            return Optional.empty();
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("read " + path, e);
        }
    }

    private List<String> children(String path) {
        try {
            return ZkCalls.run("list " + path, () -> zk.getChildren().forPath(path));
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("list " + path, e);
        }
    }

    private static List<Long> plus(List<Long> stack, long layer) {
        List<Long> out = new ArrayList<>(stack);
        out.add(layer);
        return out;
    }

    private static String now() {
        return Instant.now().truncatedTo(ChronoUnit.MILLIS).toString();
    }

    /** The operations of one transaction, gathered from versioned reads. */
    private final class Tx {
        final List<CuratorOp> ops = new ArrayList<>();

        /** Curator's op builders declare Exception though they only build; anything thrown here is a bug. */
        void add(ZkCalls.ZkCall<CuratorOp> op) {
            try {
                ops.add(op.call());
            } catch (Exception e) {
                throw new IllegalStateException("building a ZooKeeper operation: " + e, e);
            }
        }
        private long nextId = -1;
        private Stat counterStat;

        /** Reserves {@code n} consecutive ids from the volume id sequence (one counter update per transaction). */
        long takeIds(int n) {
            if (counterStat != null) {
                throw new IllegalStateException("ids already taken in this transaction");
            }
            counterStat = new Stat();
            try {
                byte[] raw = ZkCalls.run("read volume id counter",
                        () -> zk.getData().storingStatIn(counterStat).forPath(ZkPaths.VOLUME_ID_COUNTER));
                nextId = Long.parseLong(new String(raw, StandardCharsets.US_ASCII).trim());
            } catch (KeeperException e) {
                throw ZkCalls.unexpected("read volume id counter", e);
            }
            add(() -> zk.transactionOp().setData().withVersion(counterStat.getVersion())
                    .forPath(ZkPaths.VOLUME_ID_COUNTER, Long.toString(nextId + n).getBytes(StandardCharsets.US_ASCII)));
            return nextId;
        }

        /** Moves the provisioned total by {@code delta} in this transaction, a growth admitted by {@code guard}. */
        void provision(ProvisionGuard guard, long delta) {
            ProvisionedBytes counter = new ProvisionedBytes(zk);
            ProvisionedBytes.Reading total = counter.admit(guard, delta);
            ops.add(counter.add(total, delta));
        }

        void addLayer(long layer, String volume, long chunkSize, String createdAt) {
            add(() -> zk.transactionOp().create().forPath(ZkPaths.layer(layer),
                    MetaJson.write(new LayerRecord(layer, volume, chunkSize, createdAt))));
            add(() -> zk.transactionOp().create().forPath(ZkPaths.layerChunkMap(layer)));
        }

        /**
         * A volume never snapshotted keeps its one map under its own znode; before its stack can
         * change, that map moves to {@code /fastblock/layers/{id}} (buckets copied and deleted at
         * their read versions; the map parent's version, bumped by every new bucket, checked).
         */
        void moveLegacyMap(VolumeRecord v) {
            if (v.layered()) {
                return;
            }
            String legacy = ZkPaths.chunkMap(v.name());
            Stat parent = new Stat();
            boolean present;
            try {
                ZkCalls.run("read " + legacy, () -> zk.getData().storingStatIn(parent).forPath(legacy));
                present = true;
            } catch (KeeperException.NoNodeException e) {
                present = false;
            } catch (KeeperException e) {
                throw ZkCalls.unexpected("read " + legacy, e);
            }
            addLayer(v.id(), v.name(), v.chunkSize(), v.createdAt());
            if (!present) {
                return;
            }
            add(() -> zk.transactionOp().check().withVersion(parent.getVersion()).forPath(legacy));
            for (String b : children(legacy)) {
                Stat bs = new Stat();
                byte[] data;
                try {
                    data = ZkCalls.run("read " + legacy, () -> zk.getData().storingStatIn(bs).forPath(legacy + "/" + b));
                } catch (KeeperException.NoNodeException e) {
                    continue; // the parent check fails the transaction if the map changed
                } catch (KeeperException e) {
                    throw ZkCalls.unexpected("read " + legacy, e);
                }
                add(() -> zk.transactionOp().create().forPath(ZkPaths.layerChunkMap(v.id()) + "/" + b, data));
                add(() -> zk.transactionOp().delete().withVersion(bs.getVersion()).forPath(legacy + "/" + b));
            }
        }

        /** Records the seal of {@code layer}: storage servers admit no write to it any more. */
        void seal(long layer) {
            setFence(layer, Long.MAX_VALUE);
        }

        /**
         * The new top takes over the lease epoch floor, so a gateway whose lease was taken over
         * cannot write into the new layer either; the lease's version is checked so a takeover
         * racing with this change makes it decide again.
         */
        void carryLease(VolumeRecord v, long newTop) {
            Stat ls = new Stat();
            Optional<LeaseRecord> lease = read(ZkPaths.lease(v.id()), ls, LeaseRecord.class);
            if (lease.isEmpty()) {
                // Create-then-delete in one transaction asserts the lease is still absent.
                add(() -> zk.transactionOp().create().forPath(ZkPaths.lease(v.id())));
                add(() -> zk.transactionOp().delete().forPath(ZkPaths.lease(v.id())));
                return;
            }
            add(() -> zk.transactionOp().check().withVersion(ls.getVersion()).forPath(ZkPaths.lease(v.id())));
            setFence(newTop, lease.get().epoch());
        }

        private void setFence(long layer, long epoch) {
            String path = ZkPaths.fence(layer);
            byte[] data = Long.toString(epoch).getBytes(StandardCharsets.US_ASCII);
            Stat fs = new Stat();
            try {
                ZkCalls.run("read " + path, () -> zk.getData().storingStatIn(fs).forPath(path));
                add(() -> zk.transactionOp().setData().withVersion(fs.getVersion()).forPath(path, data));
            } catch (KeeperException.NoNodeException e) {
                add(() -> zk.transactionOp().create().forPath(path, data));
            } catch (KeeperException e) {
                throw ZkCalls.unexpected("read " + path, e);
            }
        }

        void reclaim(ReclaimRecord r) {
            add(() -> zk.transactionOp().create().withMode(CreateMode.PERSISTENT_SEQUENTIAL)
                    .forPath(ZkPaths.RECLAIM + "/r-", MetaJson.write(r)));
        }

        void ensure(String path) {
            if (!exists(path)) {
                add(() -> zk.transactionOp().create().forPath(path));
            }
        }

        void deleteIfExists(String path) {
            if (exists(path)) {
                add(() -> zk.transactionOp().delete().forPath(path));
            }
        }

        private boolean exists(String path) {
            try {
                return ZkCalls.run("check " + path, () -> zk.checkExists().forPath(path)) != null;
            } catch (KeeperException e) {
                throw ZkCalls.unexpected("check " + path, e);
            }
        }

        /** Applies the transaction: true when applied, false when a concurrent change made it fail (decide again). */
        boolean commit(String what) {
            try {
                return commitOrThrow(what);
            } catch (KeeperException.NodeExistsException e) {
                return false;
            }
        }

        boolean commitOrThrow(String what) throws KeeperException.NodeExistsException {
            try {
                ZkCalls.run(what, () -> zk.transaction().forOperations(ops));
                return true;
            } catch (KeeperException.NodeExistsException e) {
                throw e;
            } catch (KeeperException.BadVersionException | KeeperException.NoNodeException
                     | KeeperException.NotEmptyException e) {
                return false;
            } catch (KeeperException e) {
                throw ZkCalls.unexpected(what, e);
            }
        }
    }
}
