package io.fastblock.namenode.repair;

import io.fastblock.namenode.meta.GroupStore;
import io.fastblock.namenode.meta.NodeStore;
import io.fastblock.namenode.meta.NodeStore.NodeState;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.NodeAdminRecord;
import io.fastblock.protocol.meta.ZkPaths;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leader's chain repair loop: reads the cluster (nodes, liveness, groups, caught-up markers),
 * asks {@link RepairPlanner} what to change, and applies each group change as one versioned write
 * (a change that lost a race is dropped and planned again from fresh state next round). Runs on
 * its own thread, woken by any change under {@code /fastblock/live}, {@code /fastblock/groups}
 * and {@code /fastblock/node-admin}, and every second regardless, so a missed event costs a
 * second, never a repair.
 */
public final class ChainRepair implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ChainRepair.class);
    private static final long PERIOD_MS = 1000;

    private final GroupStore groups;
    private final NodeStore nodes;
    private final int maxJoins;
    private final Duration rejoinWindow;
    private final List<CuratorCache> caches;
    private final ScheduledExecutorService worker = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "chain-repair");
        t.setDaemon(true);
        return t;
    });
    private final AtomicBoolean pending = new AtomicBoolean();
    /** group id -> (node, when it left): a node back within the rejoin window is preferred there. */
    private final Map<Integer, Departed> departed = new ConcurrentHashMap<>();

    private record Departed(String node, long atMillis) {
    }

    public ChainRepair(CuratorFramework zk, GroupStore groups, NodeStore nodes, int maxJoins, Duration rejoinWindow) {
        this.groups = groups;
        this.nodes = nodes;
        this.maxJoins = maxJoins;
        this.rejoinWindow = rejoinWindow;
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
        long now = System.currentTimeMillis();
        Map<Integer, String> returning = new HashMap<>();
        departed.forEach((group, d) -> {
            if (now - d.atMillis() <= rejoinWindow.toMillis()) {
                returning.put(group, d.node());
            }
        });
        RepairPlanner.Plan plan = RepairPlanner.plan(snapshot, nodeStates, caughtUp, returning, maxJoins);
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
                    departed.remove(c.before().id());
                }
            } else {
                LOG.debug("group {} changed meanwhile; planning again", c.before().id());
            }
        }
        for (RepairPlanner.Departure d : plan.departed()) {
            departed.put(d.groupId(), new Departed(d.nodeId(), now));
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
