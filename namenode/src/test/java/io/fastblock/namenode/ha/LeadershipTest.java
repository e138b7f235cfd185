package io.fastblock.namenode.ha;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Leadership on a real ZooKeeper: where the leader services are started, and what close leaves running. */
class LeadershipTest {
    private TestingServer zkServer;
    private CuratorFramework zk;

    @BeforeEach
    void up() throws Exception {
        zkServer = new TestingServer(true);
        zk = CuratorFrameworkFactory.newClient(zkServer.getConnectString(), new RetryOneTime(100));
        zk.start();
        assertTrue(zk.blockUntilConnected(10, TimeUnit.SECONDS));
    }

    @AfterEach
    void down() throws Exception {
        zk.close();
        zkServer.close();
    }

    /**
     * Leader services that take a while to start (waiting for a lock that a chunk allocation holds
     * while its batched reads wait for ZooKeeper's answers) must not hold up those answers: they are
     * all delivered by ZooKeeper's one event thread.
     */
    @Test
    void startingTheLeaderServicesLeavesZooKeepersEventThreadFree() throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicReference<String> startedOn = new AtomicReference<>();
        Leadership leadership = new Leadership(zk, "http://127.0.0.1:1", () -> {
            startedOn.set(Thread.currentThread().getName());
            entered.countDown();
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return () -> { };
        });
        try {
            leadership.start();
            assertTrue(entered.await(10, TimeUnit.SECONDS), "leadership was not won");
            CountDownLatch answered = new CountDownLatch(1);
            zk.getData().inBackground((client, event) -> answered.countDown()).forPath("/");
            assertTrue(answered.await(5, TimeUnit.SECONDS),
                    "an asynchronous ZooKeeper read waited while the leader services started on " + startedOn.get());
            assertFalse(startedOn.get().contains("EventThread"), startedOn.get());
        } finally {
            release.countDown();
            leadership.close();
        }
    }

    @Test
    void closeStopsTheServicesItStarted() throws Exception {
        AtomicInteger started = new AtomicInteger();
        AtomicInteger stopped = new AtomicInteger();
        CountDownLatch up = new CountDownLatch(1);
        Leadership leadership = new Leadership(zk, "http://127.0.0.1:1", () -> {
            started.incrementAndGet();
            up.countDown();
            return stopped::incrementAndGet;
        });
        leadership.start();
        assertTrue(up.await(10, TimeUnit.SECONDS), "leadership was not won");
        assertTrue(leadership.isLeader());
        leadership.close();
        assertEquals(1, started.get());
        assertEquals(1, stopped.get(), "the running services are stopped by close");
        assertFalse(leadership.isLeader());
    }
}
