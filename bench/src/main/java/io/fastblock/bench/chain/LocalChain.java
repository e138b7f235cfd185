package io.fastblock.bench.chain;

import io.fastblock.namenode.zookeeper.EmbeddedZooKeeper;
import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.ZkPaths;
import io.fastblock.storage.StorageServer;
import io.fastblock.storage.StorageServerConfig;
import io.fastblock.storage.chain.ChainLimits;
import io.fastblock.storage.chain.TailLayout;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;

/**
 * Three storage servers in one chain (group 1: head, middle, tail), each with its own data
 * directory under {@code dir}, on an embedded ZooKeeper; everything on 127.0.0.1 and free ports.
 * They run in this JVM but talk to each other over TCP, as in a cluster; the group record is
 * written the way the namenode would.
 */
public final class LocalChain implements AutoCloseable {
    public static final int GROUP = 1;
    public static final ChainAddress CHAIN = new ChainAddress(GROUP, 1, 0);

    private final EmbeddedZooKeeper zooKeeper;
    private final CuratorFramework zk;
    private final List<StorageServer> servers = new ArrayList<>();

    private LocalChain(EmbeddedZooKeeper zooKeeper, CuratorFramework zk) {
        this.zooKeeper = zooKeeper;
        this.zk = zk;
    }

    public static LocalChain start(Path dir, TailLayout layout) throws Exception {
        EmbeddedZooKeeper zooKeeper = EmbeddedZooKeeper.start(dir.resolve("zk"), "127.0.0.1", 0);
        CuratorFramework zk = CuratorFrameworkFactory.newClient(zooKeeper.connectString(), new RetryOneTime(200));
        LocalChain chain = new LocalChain(zooKeeper, zk);
        try {
            zk.start();
            if (!zk.blockUntilConnected(30, TimeUnit.SECONDS)) {
                throw new IOException("cannot connect to the embedded ZooKeeper");
            }
            List<String> ids = List.of("bench-head", "bench-middle", "bench-tail");
            for (String id : ids) {
                StorageServerConfig config = new StorageServerConfig(id, dir.resolve(id), "127.0.0.1", 0,
                        zooKeeper.connectString(), StorageServerConfig.DEFAULT_SEGMENT_SIZE, ChainLimits.DEFAULTS, layout);
                chain.servers.add(StorageServer.start(config));
            }
            zk.create().creatingParentsIfNeeded().forPath(ZkPaths.group(GROUP), MetaJson.write(new GroupRecord(GROUP, 1, ids)));
        } catch (Exception | Error e) {
            chain.close();
            throw e;
        }
        return chain;
    }

    public StorageServer head() {
        return servers.get(0);
    }

    public StorageServer tail() {
        return servers.get(servers.size() - 1);
    }

    public List<StorageServer> servers() {
        return List.copyOf(servers);
    }

    @Override
    public void close() {
        for (int i = servers.size() - 1; i >= 0; i--) {
            servers.get(i).close();
        }
        zk.close();
        zooKeeper.close();
    }
}
