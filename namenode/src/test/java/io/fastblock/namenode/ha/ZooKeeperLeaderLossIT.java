package io.fastblock.namenode.ha;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.namenode.NameNode;
import io.fastblock.namenode.NameNodeConfig;
import io.fastblock.namenode.TestHttp;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.NodeRecord;
import io.fastblock.protocol.meta.ZkPaths;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Chunk allocations running while the ZooKeeper ensemble loses its leader, several times over on a
 * real 3-server ensemble: the namenode loses and regains leadership on each loss, and no allocation
 * may wait much longer than the election. When regaining leadership ran on ZooKeeper's event thread,
 * an allocation in flight stalled the namenode for its reads' 30 s timeout.
 */
class ZooKeeperLeaderLossIT {
    private static final int ROUNDS = 4;
    private static final int ALLOCATORS = 4;
    /** Far above an election here (about 1-3 s), far below the stall (30 s). */
    private static final long LONGEST_ALLOWED_MS = 15_000;

    @TempDir
    Path dir;

    @Test
    void allocationsInFlightWhenZooKeepersLeaderDiesWaitOnlyForTheElection() throws Exception {
        try (TestingCluster ensemble = Ensembles.of(3)) {
            ensemble.start();
            NameNode nn = NameNode.start(NameNodeConfig.fromArgs("--data-dir=" + dir, "--http-port=0",
                    "--zk=" + ensemble.getConnectString(), "--oversubscription=0"));
            // The storage side's session outlives every outage below (Curator's default is 60 s).
            try (CuratorFramework storage = CuratorFrameworkFactory.newClient(ensemble.getConnectString(),
                    new RetryOneTime(100))) {
                storage.start();
                assertTrue(storage.blockUntilConnected(10, TimeUnit.SECONDS));
                for (int i = 1; i <= 3; i++) {
                    String id = "storage-" + i;
                    storage.create().creatingParentsIfNeeded().forPath(ZkPaths.node(id),
                            MetaJson.write(new NodeRecord(id, "127.0.0.1", 9400 + i, 1L << 40, 1L << 40)));
                    storage.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(ZkPaths.live(id));
                }
                TestHttp http = new TestHttp(nn.baseUrl());
                assertEquals(201, http.post("/v1/volumes", "{\"name\":\"v\",\"size\":\"64T\"}").status());
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (http.get("/v1/groups").json().get("groups").size() < 3 && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                assertEquals(3, http.get("/v1/groups").json().get("groups").size(), "groups were not formed");

                AtomicInteger nextChunk = new AtomicInteger();
                AtomicLong longestMs = new AtomicLong();
                AtomicInteger allocated = new AtomicInteger();
                ConcurrentLinkedQueue<String> slow = new ConcurrentLinkedQueue<>();
                AtomicBoolean stop = new AtomicBoolean();
                List<Thread> allocators = new ArrayList<>();
                for (int t = 0; t < ALLOCATORS; t++) {
                    Thread a = new Thread(() -> allocate(nn.baseUrl(), nextChunk, longestMs, allocated, slow, stop),
                            "allocator-" + t);
                    a.start();
                    allocators.add(a);
                }
                try {
                    for (int round = 0; round < ROUNDS; round++) {
                        Thread.sleep(1_000);
                        InstanceSpec leader = Ensembles.leader(ensemble);
                        assertNotNull(leader, "no ZooKeeper leader in round " + round);
                        int before = allocated.get();
                        assertTrue(ensemble.killServer(leader));
                        Thread.sleep(6_000);
                        assertTrue(ensemble.restartServer(leader));
                        Thread.sleep(2_000);
                        System.out.printf("ZooKeeper leader lost (round %d): %d allocations since, longest call so far"
                                + " %d ms%n", round, allocated.get() - before, longestMs.get());
                    }
                } finally {
                    stop.set(true);
                    for (Thread a : allocators) {
                        a.join(TimeUnit.SECONDS.toMillis(70));
                    }
                }
                System.out.printf("%d chunks allocated over %d ZooKeeper leader losses, longest call %d ms%n",
                        allocated.get(), ROUNDS, longestMs.get());
                assertTrue(slow.isEmpty(), "allocations that waited more than " + LONGEST_ALLOWED_MS + " ms: " + slow);
                assertTrue(allocated.get() > ROUNDS * ALLOCATORS, "too few allocations to tell: " + allocated.get());
            } finally {
                nn.close();
            }
        }
    }

    /** Allocates chunk after chunk until stopped; a call that fails (503 while electing) is retried. */
    private static void allocate(String baseUrl, AtomicInteger nextChunk, AtomicLong longestMs, AtomicInteger allocated,
                                 ConcurrentLinkedQueue<String> slow, AtomicBoolean stop) {
        TestHttp http = new TestHttp(baseUrl);
        int chunk = nextChunk.getAndIncrement();
        while (!stop.get()) {
            long start = System.nanoTime();
            String outcome;
            try {
                TestHttp.Reply r = http.post("/v1/volumes/v/chunks/" + chunk, "");
                outcome = Integer.toString(r.status());
                if (r.status() == 200) {
                    allocated.incrementAndGet();
                    chunk = nextChunk.getAndIncrement();
                }
            } catch (Exception e) {
                outcome = e.toString();
            }
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            longestMs.accumulateAndGet(ms, Math::max);
            if (ms > LONGEST_ALLOWED_MS) {
                slow.add("chunk " + chunk + ": " + outcome + " after " + ms + " ms");
            }
            if (!outcome.equals("200")) {
                // 503 comes back at once while no namenode leads: asking again at once only spins.
                try {
                    Thread.sleep(50);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }
}
