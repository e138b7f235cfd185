package io.fastblock.namenode.meta;

import io.fastblock.protocol.meta.ZkPaths;
import java.nio.charset.StandardCharsets;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;

/** Creates the persistent parents of the layout in {@link ZkPaths} and the counters, if missing. */
public final class ZkSchema {
    /** Volume ids start at 1 so 0 never names a volume in storage keys. */
    static final long FIRST_VOLUME_ID = 1;

    private ZkSchema() {
    }

    public static void ensure(CuratorFramework zk) {
        for (String path : new String[] {ZkPaths.ROOT, ZkPaths.NODES, ZkPaths.LIVE, ZkPaths.GROUPS, ZkPaths.VOLUMES,
                ZkPaths.COUNTERS, ZkPaths.CLIENT_IDS, ZkPaths.TENANTS, ZkPaths.LEASES, ZkPaths.NODE_ADMIN,
                ZkPaths.FENCES, ZkPaths.LAYERS, ZkPaths.RECLAIM, ZkPaths.DOWN}) {
            createIfAbsent(zk, path, new byte[0]);
        }
        createIfAbsent(zk, ZkPaths.VOLUME_ID_COUNTER,
                Long.toString(FIRST_VOLUME_ID).getBytes(StandardCharsets.US_ASCII));
        // The provisioned total, summed from the volumes if this cluster has none yet (one from before it existed).
        new ProvisionedBytes(zk).read();
    }

    private static void createIfAbsent(CuratorFramework zk, String path, byte[] data) {
        try {
            ZkCalls.run("create " + path, () -> zk.create().forPath(path, data));
        } catch (KeeperException.NodeExistsException e) {
            // Already there from an earlier start or another namenode: exactly what we want.
        } catch (KeeperException e) {
            throw ZkCalls.unexpected("create " + path, e);
        }
    }
}
