package io.fastblock.local;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.fastblock.gateway.GatewayConfig;
import io.fastblock.gateway.client.FastClient;
import io.fastblock.gateway.client.FastVolume;
import io.fastblock.gateway.client.VolumeLease;
import io.fastblock.gateway.scsi.DeviceException;
import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.Status;
import io.fastblock.protocol.client.BlockingStorageClient;
import io.fastblock.protocol.client.StorageStatusException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two gateways, one volume, real storage servers (separate processes) and a real namenode: the write
 * lease moves from the gateway that wrote to the one that writes now (a live migration). The namenode
 * fences the volume on every storage server before it answers the new holder, so the old gateway's
 * next write is refused by storage itself (STALE_EPOCH), a write it had running when the lease moved
 * never lands over the new holder's data, and every read (either gateway, every replica) returns the
 * last acknowledged write.
 */
class LeaseFencingIT {
    private static final int BLOCK = 4096;

    @TempDir
    static Path dir;
    private static LocalCluster cluster;

    @BeforeAll
    static void up() throws Exception {
        cluster = LocalCluster.start(TestClusters.onFreePorts(dir.resolve("var"), "--chunk-size=4M", "--no-demo"),
                LocalCluster.defaultClasspath(), System.out);
        assertEquals(201, cluster.admin().createVolume("fenced", "64M", "4M").status());
    }

    @AfterAll
    static void down() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static FastClient gateway(int port) {
        return new FastClient(GatewayConfig.fromArgs("--port=" + port, "--namenode=" + cluster.config().namenodeUrl()),
                new SimpleMeterRegistry());
    }

    private static byte[] pattern(int seed) {
        byte[] b = new byte[BLOCK];
        Arrays.fill(b, (byte) seed);
        b[0] = (byte) 0xA5;
        return b;
    }

    private static void write(FastVolume v, byte[] data) throws Exception {
        v.write(0, Unpooled.wrappedBuffer(data)).get(30, TimeUnit.SECONDS);
    }

    private static byte[] read(FastVolume v) throws Exception {
        ByteBuf b = v.read(0, BLOCK).get(30, TimeUnit.SECONDS);
        try {
            byte[] out = new byte[BLOCK];
            b.getBytes(b.readerIndex(), out);
            return out;
        } finally {
            b.release();
        }
    }

    @Test
    void theLeaseMovesAndStorageRefusesTheOldGatewaysWrites() throws Exception {
        try (FastClient a = gateway(3261); FastClient b = gateway(3262)) {
            FastVolume va = a.openVolume("fenced").get(30, TimeUnit.SECONDS);
            FastVolume vb = b.openVolume("fenced").get(30, TimeUnit.SECONDS);
            write(va, pattern(1));
            long oldEpoch = va.leaseEpoch();
            assertEquals(VolumeLease.State.HELD, va.lease().state());

            // The old gateway keeps writing the same block while the destination takes the lease over.
            AtomicBoolean fenced = new AtomicBoolean();
            AtomicLong acked = new AtomicLong();
            CompletableFuture<Throwable> oldWriter = CompletableFuture.supplyAsync(() -> {
                try {
                    while (true) {
                        write(va, pattern(2));
                        acked.incrementAndGet();
                    }
                } catch (Throwable t) {
                    return t;
                }
            });
            Thread.sleep(300);
            write(vb, pattern(3)); // the lease moves, storage is fenced, then the write goes through
            long ackedBeforeMove = acked.get();
            assertTrue(vb.leaseEpoch() > oldEpoch, "epoch " + vb.leaseEpoch() + " after " + oldEpoch);

            Throwable end = oldWriter.get(60, TimeUnit.SECONDS);
            Throwable cause = end instanceof ExecutionException ? end.getCause() : end;
            DeviceException refused = assertInstanceOf(DeviceException.class, cause, String.valueOf(end));
            assertEquals(DeviceException.Reason.FENCED, refused.reason(), refused.getMessage());
            assertEquals(VolumeLease.State.LOST, va.lease().state());
            assertEquals(0, va.chunkMap().size(), "the old gateway's chunk map cache is dropped");
            System.out.printf("old gateway: %d writes acknowledged before the move, %d in all, then FENCED: %s%n",
                    ackedBeforeMove, acked.get(), refused.getMessage());

            // Nothing the old gateway had running landed over the new holder's write.
            assertArrayEquals(pattern(3), read(vb));
            assertArrayEquals(pattern(3), read(va), "the old gateway reads the new data, not its own");
            assertReplicasHold(pattern(3), vb.leaseEpoch());

            // Storage itself refuses the old epoch: a write sent straight to the head with it.
            JsonNode group = cluster.admin().get("/v1/volumes/fenced/chunks/0").body().get("group");
            JsonNode head = group.get("members").get(0);
            long volumeId = cluster.admin().get("/v1/volumes/fenced").body().get("id").asLong();
            try (BlockingStorageClient c = new BlockingStorageClient(head.get("host").asText(),
                    head.get("port").asInt(), Duration.ofSeconds(10))) {
                StorageStatusException stale = assertThrows(StorageStatusException.class, () -> c.write(
                        new ChainAddress(group.get("id").asInt(), group.get("chainVersion").asLong(), oldEpoch),
                        new ChunkId(volumeId, 0), 0, pattern(4)));
                assertEquals(Status.STALE_EPOCH, stale.status(), stale.getMessage());
            }
            assertArrayEquals(pattern(3), read(vb));

            write(vb, pattern(5)); // the new holder goes on writing
            assertArrayEquals(pattern(5), read(va));
            assertEquals(DeviceException.Reason.FENCED, assertInstanceOf(DeviceException.class,
                    assertThrows(ExecutionException.class, () -> write(va, pattern(6))).getCause()).reason());
            assertReplicasHold(pattern(5), vb.leaseEpoch());
        }
    }

    /** Every member of chunk 0's group holds {@code block} at offset 0, read over the storage protocol. */
    private static void assertReplicasHold(byte[] block, long epoch) throws Exception {
        JsonNode group = cluster.admin().get("/v1/volumes/fenced/chunks/0").body().get("group");
        long volumeId = cluster.admin().get("/v1/volumes/fenced").body().get("id").asLong();
        ChainAddress chain = new ChainAddress(group.get("id").asInt(), group.get("chainVersion").asLong(), epoch);
        assertEquals(3, group.get("members").size(), group.toString());
        for (JsonNode m : group.get("members")) {
            try (BlockingStorageClient c = new BlockingStorageClient(m.get("host").asText(), m.get("port").asInt(),
                    Duration.ofSeconds(10))) {
                assertArrayEquals(block, c.read(chain, new ChunkId(volumeId, 0), 0, BLOCK),
                        "replica " + m.get("id").asText());
            }
        }
    }
}
