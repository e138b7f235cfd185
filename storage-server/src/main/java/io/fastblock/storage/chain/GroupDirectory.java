package io.fastblock.storage.chain;

import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.ZkPaths;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.apache.curator.framework.CuratorFramework;

/** Replication groups as published by the namenode under {@code /fastblock/groups}. */
public final class GroupDirectory implements GroupLookup, AutoCloseable {
    private final ZkRecordCache<GroupRecord> groups;
    private final CuratorFramework zk;
    private final Executor blocking;

    public GroupDirectory(CuratorFramework zk, Executor blocking) {
        this.zk = zk;
        this.blocking = blocking;
        this.groups = new ZkRecordCache<>(zk, ZkPaths.GROUPS, GroupRecord.class, blocking);
    }

    private static String child(int groupId) {
        String path = ZkPaths.group(groupId);
        return path.substring(path.lastIndexOf('/') + 1);
    }

    public GroupDirectory start() {
        groups.start();
        return this;
    }

    @Override
    public GroupRecord cached(int groupId) {
        return groups.cached(child(groupId));
    }

    @Override
    public CompletableFuture<GroupRecord> refresh(int groupId) {
        return groups.fetch(child(groupId));
    }

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
