package io.fastblock.storage.chain;

import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.ZkPaths;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.apache.curator.framework.CuratorFramework;

/** Replication groups as published by the namenode under {@code /fastblock/groups}. */
public final class GroupDirectory implements GroupLookup, AutoCloseable {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(GroupDirectory.class);
    private final ZkRecordCache<GroupRecord> groups;
    private final CuratorFramework zk;
    private final Executor blocking;

    public GroupDirectory(CuratorFramework zk, Executor blocking) {
        this.zk = zk;
        this.blocking = blocking;
        this.groups = new ZkRecordCache<>(zk, ZkPaths.GROUPS, GroupRecord.class, blocking);
    }

    private static String child(int groupId) {
        return ZkPaths.groupName(groupId);
    }

    public GroupDirectory start() {
        groups.start();
        return this;
    }

    @Override
    public GroupRecord cached(int groupId) {
        return groups.cached(child(groupId));
    }

    /**
     * A re-read is asked for when the cached record is suspected stale, and the ZooKeeper server
     * this session reads from may be a follower that has not applied the newest writes yet: another
     * node (a joining one, say) can already have seen a record this server would not return. A
     * {@code sync} first makes the read reflect every write committed before it. A failed sync
     * does not fail the re-read (writes wait on it): the read goes ahead as before, and catch-up
     * does not rely on the sync alone (the tail checks that it knows the joiner, the joiner that
     * the record was not rewritten during its copy).
     */
    @Override
    public CompletableFuture<GroupRecord> refresh(int groupId) {
        String path = ZkPaths.group(groupId);
        return sync(path).handle((v, err) -> {
            if (err != null) {
                LOG.warn("re-reading {} without a sync: {}", path, err.getMessage());
            }
            return null;
        }).thenCompose(v -> groups.fetch(child(groupId)));
    }

    private CompletableFuture<Void> sync(String path) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        try {
            zk.sync().inBackground((client, event) -> {
                // NONODE is fine (the read that follows tells); anything else is reported to the caller.
                int rc = event.getResultCode();
                if (rc == org.apache.zookeeper.KeeperException.Code.OK.intValue()
                        || rc == org.apache.zookeeper.KeeperException.Code.NONODE.intValue()) {
                    done.complete(null);
                } else {
                    done.completeExceptionally(new IllegalStateException("cannot sync " + path + " with the ZooKeeper leader: "
                            + org.apache.zookeeper.KeeperException.Code.get(rc)));
                }
            }, blocking).forPath(path);
        } catch (Exception e) {
            done.completeExceptionally(new IllegalStateException("cannot sync " + path + ": " + e.getMessage(), e));
        }
        // Curator answers a background call once its retries end; the bound only keeps a re-read
        // from waiting longer than a session would last on a sync that never answers.
        return done.orTimeout(SYNC_TIMEOUT_SECONDS, java.util.concurrent.TimeUnit.SECONDS);
    }

    private static final long SYNC_TIMEOUT_SECONDS = 10;

    @Override
    public void listen(java.util.function.Consumer<GroupRecord> listener) {
        groups.listen(listener);
    }

    @Override
    public CompletableFuture<Void> announceCaughtUp(int groupId, String nodeId) {
        return CompletableFuture.runAsync(() -> {
            String path = ZkPaths.caughtUp(groupId, nodeId);
            try {
                zk.create().creatingParentsIfNeeded().forPath(path);
            } catch (org.apache.zookeeper.KeeperException.NodeExistsException e) {
                // announced before (an earlier attempt): still true
            } catch (Exception e) {
                throw new IllegalStateException("cannot create " + path + ": " + e.getMessage(), e);
            }
        }, blocking);
    }

    @Override
    public long stamp(int groupId) {
        return groups.versionOf(child(groupId));
    }

    @Override
    public CompletableFuture<Boolean> announceCaughtUp(int groupId, String nodeId, long stamp) {
        return CompletableFuture.supplyAsync(() -> {
            String group = ZkPaths.group(groupId);
            String path = ZkPaths.caughtUp(groupId, nodeId);
            String parent = path.substring(0, path.lastIndexOf('/'));
            try {
                try {
                    zk.create().creatingParentsIfNeeded().forPath(parent);
                } catch (org.apache.zookeeper.KeeperException.NodeExistsException e) {
                    // made by an earlier announcement
                }
                try {
                    zk.transaction().forOperations(
                            zk.transactionOp().check().withVersion((int) stamp).forPath(group),
                            zk.transactionOp().create().forPath(path));
                    return true;
                } catch (org.apache.zookeeper.KeeperException.BadVersionException
                         | org.apache.zookeeper.KeeperException.NoNodeException e) {
                    return false;
                } catch (org.apache.zookeeper.KeeperException.NodeExistsException e) {
                    // announced by an earlier attempt: still true if the record was not written since
                    org.apache.zookeeper.data.Stat stat = zk.checkExists().forPath(group);
                    return stat != null && (stamp < 0 || stat.getVersion() == stamp);
                }
            } catch (Exception e) {
                throw new IllegalStateException("cannot create " + path + ": " + e.getMessage(), e);
            }
        }, blocking);
    }

    @Override
    public CompletableFuture<Void> reportProgress(int groupId, String nodeId, io.fastblock.protocol.meta.CatchUpProgress progress) {
        return CompletableFuture.runAsync(() -> {
            String path = ZkPaths.catchUpProgress(groupId, nodeId);
            try {
                byte[] json = io.fastblock.protocol.meta.MetaJson.write(progress);
                try {
                    zk.setData().forPath(path, json);
                } catch (org.apache.zookeeper.KeeperException.NoNodeException e) {
                    zk.create().creatingParentsIfNeeded().forPath(path, json);
                }
            } catch (Exception e) {
                throw new IllegalStateException("cannot write " + path + ": " + e.getMessage(), e);
            }
        }, blocking);
    }

    @Override
    public void close() {
        groups.close();
    }
}
