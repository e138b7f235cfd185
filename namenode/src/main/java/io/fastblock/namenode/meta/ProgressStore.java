package io.fastblock.namenode.meta;

import io.fastblock.protocol.meta.CatchUpProgress;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;

/** Reads the catch-up progress joining storage servers report ({@link ZkPaths#catchUpProgress}). */
public final class ProgressStore {
    private final CuratorFramework zk;

    public ProgressStore(CuratorFramework zk) {
        this.zk = zk;
    }

    /** The reported progress, or null when the joining node reports none (or wrote something unreadable). */
    public CatchUpProgress get(int groupId, String nodeId) {
        try {
            byte[] raw = ZkCalls.run("read catch-up progress",
                    () -> zk.getData().forPath(ZkPaths.catchUpProgress(groupId, nodeId)));
            return MetaJson.read(raw, CatchUpProgress.class);
        } catch (KeeperException.NoNodeException e) {
            return null;
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("read catch-up progress of group " + groupId, e);
        } catch (java.io.UncheckedIOException e) {
            return null; // a storage server's report is informational; a bad one must not break status
        }
    }
}
