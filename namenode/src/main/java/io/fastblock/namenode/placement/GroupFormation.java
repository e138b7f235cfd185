package io.fastblock.namenode.placement;

import io.fastblock.namenode.meta.GroupStore;
import io.fastblock.namenode.meta.NodeStore;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.ZkPaths;
import io.fastblock.protocol.meta.NodeRecord;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Set;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Forms the first replication groups once enough storage nodes are live, and groups for servers
 * that join later. Runs a check at start and
 * after every change under {@code /fastblock/live}; checks run one at a time on their own thread so
 * ZooKeeper's event thread never blocks.
 *
 * <p>With a settle time, the groups are formed only once the set of live nodes has not changed for
 * that long, so servers started together all get groups (the first three to register would
 * otherwise take every group, and the others would only ever be replacements).
 *
 * <p>Nodes added after the groups exist get new groups of their own ({@link GroupLayout#extend})
 * once every group is whole; existing groups and their chunks do not move. Failed nodes are
 * handled by the chain repair ({@code io.fastblock.namenode.repair}).
 */
public final class GroupFormation implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(GroupFormation.class);

    private final GroupStore groups;
    private final NodeStore nodes;
    private final CuratorCache liveCache;
    private final CuratorCache groupCache;
    private final long settleNanos;
    private final ScheduledExecutorService worker = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "group-formation");
        t.setDaemon(true);
        return t;
    });
    private List<String> lastLive = List.of(); // worker-confined
    private long stableSince;

    public GroupFormation(CuratorFramework zk, GroupStore groups, NodeStore nodes) {
        this(zk, groups, nodes, java.time.Duration.ZERO);
    }

    /** {@code settle}: how long the live set must stay the same before the groups are formed. */
    public GroupFormation(CuratorFramework zk, GroupStore groups, NodeStore nodes, java.time.Duration settle) {
        this.groups = groups;
        this.nodes = nodes;
        this.settleNanos = settle.toNanos();
        this.liveCache = CuratorCache.build(zk, ZkPaths.LIVE);
        liveCache.listenable().addListener((type, oldData, data) -> requestCheck());
        // A group made whole again by chain repair may let a waiting newcomer get its groups.
        this.groupCache = CuratorCache.build(zk, ZkPaths.GROUPS);
        groupCache.listenable().addListener((type, oldData, data) -> requestCheck());
    }

    public void start() {
        liveCache.start();
        groupCache.start();
        requestCheck();
    }

    private void requestCheck() {
        try {
            worker.execute(this::checkQuietly);
        } catch (RejectedExecutionException e) {
            // closing
        }
    }

    private void checkQuietly() {
        try {
            check();
        } catch (RuntimeException e) {
            // The next live-node change retries; log so an operator sees why groups are missing.
            LOG.warn("group formation check failed: {}", e.toString());
        }
    }

    /**
     * Forms the groups if none exist and enough nodes are live; once they exist, forms new groups
     * for live active nodes that are in none (servers added later). Returns true if it created groups.
     */
    public boolean check() {
        List<GroupRecord> existing = groups.list();
        if (!existing.isEmpty() && !allWhole(existing)) {
            return false; // chain repair first (see expand): no need to read the nodes
        }
        List<NodeRecord> live = new ArrayList<>();
        for (NodeStore.NodeState n : nodes.all().values()) {
            if (n.live() && n.active()) {
                live.add(n.record());
            }
        }
        if (!existing.isEmpty()) {
            return expand(existing, live);
        }
        if (settleNanos > 0 && live.size() >= GroupLayout.REPLICAS && !settled(live)) {
            return false;
        }
        List<GroupRecord> layout = GroupLayout.form(live);
        if (layout.isEmpty()) {
            LOG.info("{} storage node(s) live, waiting for {} to form replication groups", live.size(),
                    GroupLayout.REPLICAS);
            return false;
        }
        boolean created = groups.createAll(layout);
        if (created) {
            LOG.info("formed {} replication groups from nodes {}", layout.size(),
                    live.stream().map(NodeRecord::id).toList());
        }
        return created;
    }

    /** Every group has its three members and none is joining. */
    private static boolean allWhole(List<GroupRecord> existing) {
        for (GroupRecord g : existing) {
            if (g.members().size() < GroupLayout.REPLICAS || g.joining() != null) {
                return false;
            }
        }
        return true;
    }

    /**
     * New groups for live active nodes in no group ({@link GroupLayout#extend}), so servers added
     * after the first formation take a share of new chunks (existing chunks do not move). Only while
     * every group is whole (three members, none joining; {@link #check} looks first): until then chain repair may want the new
     * server as a replacement, and comes first. Waits for the settle time like the first formation,
     * so servers added together share their groups.
     */
    private boolean expand(List<GroupRecord> existing, List<NodeRecord> live) {
        Set<String> placed = new HashSet<>();
        for (GroupRecord g : existing) {
            placed.addAll(g.members());
        }
        List<NodeRecord> newcomers = live.stream().filter(n -> !placed.contains(n.id())).toList();
        if (newcomers.isEmpty() || (settleNanos > 0 && !settled(live))) {
            return false;
        }
        List<GroupRecord> added = GroupLayout.extend(existing, live, newcomers);
        if (added.isEmpty()) {
            return false;
        }
        boolean created = groups.createAll(added);
        if (created) {
            LOG.info("formed {} replication groups for storage node(s) {} that joined after the first groups",
                    added.size(), newcomers.stream().map(NodeRecord::id).toList());
        }
        return created;
    }

    /** Whether {@code live} has been the live set for the settle time; if not, a check is scheduled for then. */
    private boolean settled(List<NodeRecord> live) {
        List<String> ids = live.stream().map(NodeRecord::id).sorted().toList();
        long now = System.nanoTime();
        if (!ids.equals(lastLive)) {
            lastLive = ids;
            stableSince = now;
        }
        long left = settleNanos - (now - stableSince);
        if (left <= 0) {
            return true;
        }
        try {
            worker.schedule(this::checkQuietly, left, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // closing
        }
        LOG.info("{} storage node(s) live; forming the groups once that has not changed for {} ms", ids.size(),
                TimeUnit.NANOSECONDS.toMillis(settleNanos));
        return false;
    }

    @Override
    public void close() {
        liveCache.close();
        groupCache.close();
        worker.shutdown();
        try {
            worker.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
