package io.fastblock.gateway.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.gateway.GatewayConfig;
import io.fastblock.gateway.iscsi.TargetAccess;
import io.fastblock.gateway.scsi.DeviceException;
import io.fastblock.namenode.NameNode;
import io.fastblock.namenode.NameNodeConfig;
import io.fastblock.protocol.ReadRequest;
import io.fastblock.protocol.Status;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.WriteRequest;
import io.fastblock.protocol.meta.LeaseRecord;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.NodeRecord;
import io.fastblock.protocol.meta.ZkPaths;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.Unpooled;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Write leases, fencing reactions and export-based access of the FAST client against real namenodes
 * (a leader and a standby) on a real ZooKeeper. The storage servers here fence the way the contract
 * in docs/metadata.md asks: they reject a write whose epoch is below the volume's lease znode.
 */
class LeaseAndAccessTest {
    private static final int CHUNK = 1 << 20;
    private static final String INITIATOR = "iqn.1994-05.com.redhat:compute-1";
    private static final String TARGET = "iqn.2026-11.io.fastblock:vol";

    @TempDir
    Path dir;
    private TestingServer zk;
    private CuratorFramework storageSide;
    private CuratorCache leases;
    private final AtomicLong fence = new AtomicLong();
    private final List<Long> epochsSeen = new CopyOnWriteArrayList<>();
    private final List<TestStorageServer> storage = new ArrayList<>();
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private NameNode leader;
    private NameNode standby;

    private void startCluster(long leaseTtlMs) throws Exception {
        zk = new TestingServer(true);
        storageSide = CuratorFrameworkFactory.newClient(zk.getConnectString(), new RetryOneTime(100));
        storageSide.start();
        leases = CuratorCache.build(storageSide, ZkPaths.LEASES);
        leases.listenable().addListener((type, old, data) -> {
            if (data != null && data.getData() != null && data.getData().length > 0) {
                fence.accumulateAndGet(MetaJson.read(data.getData(), LeaseRecord.class).epoch(), Math::max);
            }
        });
        leases.start();
        for (int i = 1; i <= 3; i++) {
            TestStorageServer s = new TestStorageServer((ch, msg) -> {
                if (msg instanceof WriteRequest w) {
                    w.data().release();
                    epochsSeen.add(w.chain().leaseEpoch());
                    ch.writeAndFlush(w.chain().leaseEpoch() < fence.get()
                            ? StorageResponse.error(w.requestId(), w.op(), Status.STALE_EPOCH, "epoch "
                                    + w.chain().leaseEpoch() + " < " + fence.get())
                            : StorageResponse.ok(w.requestId(), w.op()));
                } else if (msg instanceof ReadRequest r) {
                    ch.writeAndFlush(r.chain().leaseEpoch() < fence.get()
                            ? StorageResponse.error(r.requestId(), r.op(), Status.STALE_EPOCH, "stale read epoch")
                            : StorageResponse.ok(r.requestId(), r.op(), ch.alloc().buffer(r.length())
                                    .writeZero(r.length())));
                } else {
                    ch.writeAndFlush(StorageResponse.ok(msg.requestId(), msg.op()));
                }
            });
            storage.add(s);
            storageSide.create().creatingParentsIfNeeded().forPath(ZkPaths.node("s" + i), MetaJson.write(
                    new NodeRecord("s" + i, "127.0.0.1", s.address().port(), 1L << 40, 1L << 40)));
            storageSide.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(ZkPaths.live("s" + i));
        }
        leader = NameNode.start(NameNodeConfig.fromArgs("--data-dir=" + dir.resolve("a"), "--http-port=0",
                "--zk=" + zk.getConnectString(), "--lease-ttl-ms=" + leaseTtlMs));
        standby = NameNode.start(NameNodeConfig.fromArgs("--data-dir=" + dir.resolve("b"), "--http-port=0",
                "--zk=" + zk.getConnectString(), "--lease-ttl-ms=" + leaseTtlMs));
        assertTrue(leader.isLeader());
        long deadline = System.currentTimeMillis() + 10_000;
        while (storageSide.getChildren().forPath(ZkPaths.GROUPS).isEmpty() && System.currentTimeMillis() < deadline) {
            Thread.sleep(50);
        }
        post(leader, "/v1/volumes", "{\"name\":\"vol\",\"size\":" + 16 * CHUNK + ",\"chunkSize\":" + CHUNK + "}");
    }

    private static String post(NameNode nn, String path, String body) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(nn.baseUrl() + path))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
        return r.body();
    }

    /** A gateway whose namenode list starts with the standby, so every write goes through a 307. */
    private FastClient gateway(int port) {
        FastClient c = new FastClient(GatewayConfig.fromArgs("--port=" + port, "--namenode=" + standby.baseUrl() + ","
                + leader.baseUrl()), new SimpleMeterRegistry());
        closeables.add(c);
        return c;
    }

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : closeables) {
            c.close();
        }
        storage.forEach(TestStorageServer::close);
        if (standby != null) {
            standby.close();
        }
        if (leader != null) {
            leader.close();
        }
        if (leases != null) {
            leases.close();
        }
        if (storageSide != null) {
            storageSide.close();
        }
        if (zk != null) {
            zk.close();
        }
    }

    private static void write(FastVolume v) throws Exception {
        v.write(0, Unpooled.wrappedBuffer(new byte[4096])).get(10, TimeUnit.SECONDS);
    }

    private static DeviceException writeFails(FastVolume v) throws Exception {
        try {
            write(v);
        } catch (ExecutionException e) {
            return assertInstanceOf(DeviceException.class, e.getCause());
        }
        throw new AssertionError("write succeeded");
    }

    @Test
    void theWriterTakesTheLeaseAndTheOldGatewayIsFencedByStorage() throws Exception {
        startCluster(60_000); // no renewal during the test: storage's rejection is what fences
        FastClient a = gateway(3261);
        FastClient b = gateway(3262);
        FastVolume va = a.openVolume("vol").get(10, TimeUnit.SECONDS);
        FastVolume vb = b.openVolume("vol").get(10, TimeUnit.SECONDS);
        assertEquals(VolumeLease.State.NONE, va.lease().state(), "opening does not take the lease");
        assertEquals(-1, va.lease().heldEpoch());

        write(va);
        assertEquals(1, va.leaseEpoch());
        assertEquals(1, va.lease().heldEpoch(), "later writes take the held epoch without a future");
        assertTrue(epochsSeen.stream().allMatch(e -> e == 1), epochsSeen.toString());
        assertTrue(va.chunkMap().size() > 0);

        write(vb); // live migration: the destination writes, the lease moves
        assertEquals(2, vb.leaseEpoch());
        assertEquals(VolumeLease.State.HELD, vb.lease().state());

        DeviceException fenced = writeFails(va);
        assertEquals(DeviceException.Reason.FENCED, fenced.reason(), fenced.getMessage());
        assertEquals(VolumeLease.State.LOST, va.lease().state());
        assertEquals(-1, va.lease().heldEpoch());
        assertEquals(0, va.chunkMap().size(), "the old gateway's chunk map cache is dropped");
        int seen = epochsSeen.size();
        assertEquals(DeviceException.Reason.FENCED, writeFails(va).reason());
        assertEquals(seen, epochsSeen.size(), "once fenced, writes no longer reach storage");
        write(vb);
        // Reads on the old gateway still work: they need no lease, only the current epoch, which they learn.
        va.read(0, 4096).get(10, TimeUnit.SECONDS).release();
        assertEquals(2, va.leaseEpoch());
        assertEquals(DeviceException.Reason.FENCED, writeFails(va).reason(), "learning the epoch gives no right to write");

        // A third gateway that only reads: it opens with the current epoch and never takes the lease.
        FastClient c = gateway(3263);
        FastVolume vc = c.openVolume("vol").get(10, TimeUnit.SECONDS);
        assertEquals(2, vc.leaseEpoch());
        vc.read(0, 4096).get(10, TimeUnit.SECONDS).release();
        write(vb); // still epoch 2: vb keeps the lease
        // The lease moves once more (a fourth gateway writes): the reader learns the new epoch on its next read.
        FastVolume vd = gateway(3264).openVolume("vol").get(10, TimeUnit.SECONDS);
        write(vd);
        vc.read(0, 4096).get(10, TimeUnit.SECONDS).release();
        assertEquals(3, vc.leaseEpoch());
        assertEquals(VolumeLease.State.NONE, vc.lease().state());
    }

    @Test
    void renewalNoticesTheMoveAndAFailoverOfTheNamenodeKeepsTheLease() throws Exception {
        startCluster(1_500); // renewed every 500 ms
        FastClient a = gateway(3261);
        FastClient b = gateway(3262);
        FastVolume va = a.openVolume("vol").get(10, TimeUnit.SECONDS);
        write(va);
        long epoch = va.leaseEpoch();

        // The leader namenode goes; renewals and writes go on through the new leader with the same epoch.
        leader.close();
        long deadline = System.currentTimeMillis() + 10_000;
        while (!standby.isLeader() && System.currentTimeMillis() < deadline) {
            Thread.sleep(20);
        }
        assertTrue(standby.isLeader());
        Thread.sleep(2_000); // several renewal periods past the old expiry
        assertEquals(VolumeLease.State.HELD, va.lease().state());
        write(va);
        assertEquals(epoch, va.leaseEpoch());

        FastVolume vb = b.openVolume("vol").get(10, TimeUnit.SECONDS);
        write(vb);
        deadline = System.currentTimeMillis() + 5_000;
        // LOST is published before the loss callback drops the chunk map: wait for both
        while ((va.lease().state() != VolumeLease.State.LOST || va.chunkMap().size() != 0)
                && System.currentTimeMillis() < deadline) {
            Thread.sleep(20);
        }
        assertEquals(VolumeLease.State.LOST, va.lease().state(), "renewal learnt that the lease moved");
        assertEquals(0, va.chunkMap().size());
        int seen = epochsSeen.size();
        assertEquals(DeviceException.Reason.FENCED, writeFails(va).reason());
        assertEquals(seen, epochsSeen.size(), "fenced before reaching storage");
    }

    @Test
    void accessFollowsTheNamenodesExports() throws Exception {
        startCluster(60_000);
        FastClient a = gateway(3261);
        assertFalse(a.access(TARGET, INITIATOR).get(10, TimeUnit.SECONDS).allowed(), "no export, no access");
        post(leader, "/v1/volumes/vol/exports", "{\"initiator\":\"" + INITIATOR + "\"}");
        TargetAccess chap = a.access(TARGET, INITIATOR).get(10, TimeUnit.SECONDS);
        assertTrue(chap.allowed());
        assertEquals("fb-vol", chap.chap().user());
        assertEquals(16, chap.chap().secret().length());
        assertNull(chap.chap().targetUser());
        assertFalse(a.access(TARGET, "iqn.2000-01.com.other:x").get(10, TimeUnit.SECONDS).allowed());
        post(leader, "/v1/volumes/vol/exports", "{\"initiator\":\"*\",\"chap\":\"none\"}");
        assertEquals(TargetAccess.OPEN, a.access(TARGET, "iqn.2000-01.com.other:x").get(10, TimeUnit.SECONDS));
        assertFalse(a.access("iqn.2026-11.io.fastblock:nope", INITIATOR).get(10, TimeUnit.SECONDS).allowed());
        assertEquals("gw-127.0.0.1:3261", a.gatewayId());
    }

    @Test
    void theBearerTokenIsSentWhenTheNamenodeRequiresOne() throws Exception {
        zk = new TestingServer(true);
        leader = NameNode.start(NameNodeConfig.fromArgs("--data-dir=" + dir.resolve("t"), "--http-port=0",
                "--zk=" + zk.getConnectString(), "--api-token=gw-secret", "--oversubscription=0"));
        try (NamenodeClient without = new NamenodeClient(List.of(leader.baseUrl()));
             NamenodeClient with = new NamenodeClient(List.of(leader.baseUrl()), java.time.Duration.ofSeconds(5), 1,
                     "gw-secret")) {
            ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                    () -> without.listVolumes().get(10, TimeUnit.SECONDS));
            assertEquals("UNAUTHORIZED", assertInstanceOf(NamenodeException.class, e.getCause()).code());
            assertEquals(List.of(), with.listVolumes().get(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void unreachableNamenodesFailAccessAsUnavailable() throws Exception {
        try (FastClient offline = new FastClient(GatewayConfig.fromArgs("--namenode=http://127.0.0.1:1"))) {
            CompletableFuture<TargetAccess> f = offline.access(TARGET, INITIATOR);
            ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                    () -> f.get(20, TimeUnit.SECONDS));
            assertEquals(DeviceException.Reason.UNAVAILABLE, assertInstanceOf(DeviceException.class,
                    NamenodeClient.unwrap(e)).reason());
        }
    }
}
