package io.fastblock.namenode.meta;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/** A fresh real ZooKeeper (Curator TestingServer) and a connected client with the schema in place, per test. */
public abstract class ZkTestSupport {
    protected TestingServer server;
    protected CuratorFramework zk;

    @BeforeEach
    public void startZooKeeper() throws Exception {
        server = new TestingServer(true);
        zk = CuratorFrameworkFactory.newClient(server.getConnectString(), 10_000, 5_000, new RetryOneTime(100));
        zk.start();
        zk.blockUntilConnected();
        ZkSchema.ensure(zk);
    }

    @AfterEach
    public void stopZooKeeper() throws Exception {
        zk.close();
        server.close();
    }
}
