package io.fastblock.namenode.placement;

import io.fastblock.namenode.meta.GroupStore;
import io.fastblock.namenode.meta.NodeStore;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.ZkPaths;
import io.fastblock.protocol.meta.NodeRecord;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Forms the first replication groups once enough storage nodes are live. Runs a check at start and
 * after every change under {@code /fastblock/live}; checks run one at a time on their own thread so
 * ZooKeeper's event thread never blocks.
 *
 * <p>Only the initial formation happens here: failed nodes are handled by the chain repair
 * ({@code io.fastblock.namenode.repair}); nodes added after the groups exist are only used as
 * replacements so far (no new groups are formed for them).
 */
public final class GroupFormation implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(GroupFormation.class);

    private final GroupStore groups;
    private final NodeStore nodes;
    private final CuratorCache liveCache;
    private final ExecutorService worker = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "group-formation");
        t.setDaemon(true);
        return t;
    });

    public GroupFormation(CuratorFramework zk, GroupStore groups, NodeStore nodes) {
        this.groups = groups;
        this.nodes = nodes;
        this.liveCache = CuratorCache.build(zk, ZkPaths.LIVE);
        liveCache.listenable().addListener((type, oldData, data) -> requestCheck());
    }

    public void start() {
        liveCache.start();
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

    /** Forms the groups if none exist and enough nodes are live. Returns true if it created them. */
    public boolean check() {
        if (!groups.list().isEmpty()) {
            return false;
        }
        List<NodeRecord> live = new ArrayList<>();
        for (NodeStore.NodeState n : nodes.all().values()) {
            if (n.live() && n.active()) {
                live.add(n.record());
            }
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

    @Override
    public void close() {
        liveCache.close();
        worker.shutdown();
        try {
            worker.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
