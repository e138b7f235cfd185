package io.fastblock.namenode.repair;

import io.fastblock.namenode.meta.DownStore;
import io.fastblock.namenode.meta.GroupStore;
import io.fastblock.namenode.meta.NodeStore;
import io.fastblock.namenode.meta.NodeStore.NodeState;
import io.fastblock.protocol.meta.DownRecord;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.NodeAdminRecord;
import io.fastblock.protocol.meta.ZkPaths;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leader's chain repair loop: reads the cluster (nodes, liveness, groups, caught-up markers),
 * asks {@link RepairPlanner} what to change, and applies each group change as one versioned write
 * (a change that lost a race is dropped and planned again from fresh state next round). A member
 * that lost its session is recorded as down in ZooKeeper ({@link DownStore}) before it is taken
 * out of its chains, and its groups wait {@code replaceAfter} for it ({@link DownOutRules}). Runs on
 * its own thread, woken by any change under {@code /fastblock/live}, {@code /fastblock/groups}
 * and {@code /fastblock/node-admin}, and every second regardless, so a missed event costs a
 * second, never a repair.
 */
public final class ChainRepair implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ChainRepair.class);
    private static final long PERIOD_MS = 1000;

    private final GroupStore groups;
    private final NodeStore nodes;
    private final DownStore downs;
    private final int maxJoins;
    private final Duration replaceAfter;
    private final LongSupplier clock;
    private final List<CuratorCache> caches;
    private final ScheduledExecutorService worker = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "chain-repair");
        t.setDaemon(true);
        return t;
    });
    private final AtomicBoolean pending = new AtomicBoolean();
    /** Down nodes whose interval ended and whose replacement this leader announced (log once). */
    private final Set<String> announcedOut = new HashSet<>();

    public ChainRepair(CuratorFramework zk, GroupStore groups, NodeStore nodes, int maxJoins, Duration replaceAfter) {
        this(zk, groups, nodes, new DownStore(zk), maxJoins, replaceAfter, System::currentTimeMillis);
    }

    /**
     * @param replaceAfter the down/out interval: how long the groups of a member that lost its session
     *                     wait for it before it is replaced elsewhere
     * @param clock        wall clock in milliseconds (the down-since times in ZooKeeper are in it; tests
     *                     move it by hand)
     */
    public ChainRepair(CuratorFramework zk, GroupStore groups, NodeStore nodes, DownStore downs, int maxJoins,
                       Duration replaceAfter, LongSupplier clock) {
        this.groups = groups;
        this.nodes = nodes;
        this.downs = downs;
        this.maxJoins = maxJoins;
        this.replaceAfter = replaceAfter;
        this.clock = clock;
        this.caches = List.of(CuratorCache.build(zk, ZkPaths.LIVE), CuratorCache.build(zk, ZkPaths.GROUPS),
                CuratorCache.build(zk, ZkPaths.NODE_ADMIN));
        for (CuratorCache c : caches) {
            c.listenable().addListener((type, oldData, data) -> wake());
        }
    }

    public void start() {
        caches.forEach(CuratorCache::start);
        worker.scheduleWithFixedDelay(this::roundQuietly, 0, PERIOD_MS, TimeUnit.MILLISECONDS);
    }

    private void wake() {
        if (pending.compareAndSet(false, true)) {
            try {
                worker.execute(() -> {
                    pending.set(false);
                    roundQuietly();
                });
            } catch (RejectedExecutionException e) {
                // closing
            }
        }
    }

    private void roundQuietly() {
        try {
            round();
        } catch (RuntimeException e) {
            LOG.warn("chain repair round failed (retried within a second): {}", e.toString());
        }
    }

    /** One round; returns how many changes were applied. Public for tests that step it by hand. */
    public synchronized int round() {
        Map<String, NodeState> nodeStates = nodes.all();
        Map<Integer, GroupStore.Versioned> read = new HashMap<>();
        Map<Integer, List<String>> caughtUp = new HashMap<>();
        for (GroupRecord g : groups.list()) {
            groups.get(g.id()).ifPresent(v -> read.put(g.id(), v));
        }
        List<GroupRecord> snapshot = read.values().stream().map(GroupStore.Versioned::group).toList();
        for (GroupRecord g : snapshot) {
            List<String> markers = groups.caughtUp(g.id());
            if (!markers.isEmpty()) {
                caughtUp.put(g.id(), markers);
            }
        }
        long now = clock.getAsLong();
        Map<String, DownRecord> before = downs.all();
        DownOutRules.Outcome down = DownOutRules.apply(snapshot, nodeStates, before, now, replaceAfter.toMillis());
        // Written before any group changes: a namenode taking over mid-round finds the node's
        // down-since time, never a group short of a member nobody waits for.
        for (DownRecord r : down.put().values()) {
            downs.put(r);
            DownRecord old = before.get(r.id());
            if (old == null || old.downSinceMillis() != r.downSinceMillis()) {
                announcedOut.remove(r.id());
                LOG.info("node {} down since {}: groups {} wait for it until {} (--replace-after-ms={})", r.id(),
                        Instant.ofEpochMilli(r.downSinceMillis()), r.groups(),
                        Instant.ofEpochMilli(DownOutRules.replaceAtMillis(r, nodeStates.get(r.id()), replaceAfter.toMillis())),
                        replaceAfter.toMillis());
            } else if (r.back() && !old.back()) {
                LOG.info("node {} back after {} ms: rejoining groups {}", r.id(), r.backSinceMillis()
                        - r.downSinceMillis(), r.groups());
            }
        }
        for (DownRecord r : down.records().values()) {
            boolean out = !r.back()
                    && now >= DownOutRules.replaceAtMillis(r, nodeStates.get(r.id()), replaceAfter.toMillis());
            if (out && announcedOut.add(r.id())) {
                LOG.info("node {} down for {} ms (--replace-after-ms={}): replacing it in groups {}", r.id(),
                        now - r.downSinceMillis(), replaceAfter.toMillis(), r.groups());
            }
        }
        RepairPlanner.Plan plan = RepairPlanner.plan(snapshot, nodeStates, caughtUp, down.returning(), down.waiting(),
                maxJoins);
        int applied = 0;
        for (RepairPlanner.Change c : plan.changes()) {
            GroupStore.Versioned v = read.get(c.before().id());
            if (v == null || !v.group().equals(c.before())) {
                continue;
            }
            if (groups.compareAndSet(v, c.after())) {
                applied++;
                LOG.info("group {}: {} -> {} (v{} -> v{}, joining {}): {}", c.before().id(), c.before().members(),
                        c.after().members(), c.before().chainVersion(), c.after().chainVersion(), c.after().joining(),
                        c.reason());
                if (c.caughtUpNode() != null) {
                    groups.clearCaughtUp(c.before().id(), c.caughtUpNode());
                }
            } else {
                LOG.debug("group {} changed meanwhile; planning again", c.before().id());
            }
        }
        for (String id : down.delete()) {
            downs.delete(id);
            announcedOut.remove(id);
        }
        // Markers of nodes that are not (or no longer) joining would confuse a later join: remove them.
        for (Map.Entry<Integer, List<String>> e : caughtUp.entrySet()) {
            GroupRecord g = read.get(e.getKey()).group();
            for (String node : e.getValue()) {
                if (!node.equals(g.joining())) {
                    groups.clearCaughtUp(g.id(), node);
                }
            }
        }
        for (String id : plan.decommission()) {
            nodes.setAdminState(id, NodeAdminRecord.DECOMMISSIONED);
            LOG.info("node {} drained: decommissioned", id);
        }
        return applied;
    }

    @Override
    public void close() {
        caches.forEach(CuratorCache::close);
        worker.shutdownNow();
        try {
            worker.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
