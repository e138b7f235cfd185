package io.fastblock.gateway.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.gateway.GatewayConfig;
import io.fastblock.gateway.scsi.BlockDevice;
import io.fastblock.gateway.scsi.DeviceException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The whole client over real sockets: a contract-shaped namenode and three protocol-speaking storage servers. */
class FastClientTest {
    private static final int CHUNK = 1 << 20;

    private final Map<String, byte[]> store = new ConcurrentHashMap<>(); // the chain's data, shared as replication would
    private final List<TestStorageServer> nodes = new ArrayList<>();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private FakeNamenode namenode;
    private FastClient client;

    @BeforeEach
    void start() throws Exception {
        for (int i = 0; i < 3; i++) {
            nodes.add(TestStorageServer.storing(store, CHUNK));
        }
        namenode = new FakeNamenode(nodes.stream().map(TestStorageServer::address).toList());
        namenode.addVolume("vol1", 5, 16L * CHUNK, CHUNK);
        namenode.addVolume("vol2", 6, 4L * CHUNK, CHUNK);
        client = new FastClient(GatewayConfig.fromArgs("--namenode=" + namenode.url()), registry);
    }

    @AfterEach
    void stop() {
        client.close();
        nodes.forEach(TestStorageServer::close);
        namenode.close();
    }

    private static <T> T get(CompletableFuture<T> f) throws Exception {
        return f.get(10, TimeUnit.SECONDS);
    }

    private static int deadPort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @Test
    void targetsAreTheVolumesIqns() throws Exception {
        List<String> names = new ArrayList<>(get(client.targetNames("iqn.1994-05.com.redhat:client")));
        names.sort(null);
        assertEquals(List.of("iqn.2026-11.io.fastblock:vol1", "iqn.2026-11.io.fastblock:vol2"), names);
    }

    @Test
    void openingUnknownOrForeignTargetsFindsNothing() throws Exception {
        assertEquals(Optional.empty(), get(client.open("iqn.2026-11.io.fastblock:missing", "init")));
        assertEquals(Optional.empty(), get(client.open("iqn.2003-01.org.linux-iscsi:vol1", "init")));
        assertEquals(Optional.empty(), get(client.open("iqn.2026-11.io.fastblock:", "init")));
    }

    @Test
    void openDescribesTheVolume() throws Exception {
        try (BlockDevice dev = get(client.open("iqn.2026-11.io.fastblock:vol1", "init")).orElseThrow()) {
            assertEquals(16L * CHUNK, dev.sizeBytes());
            assertEquals(512, dev.blockSize());
            assertEquals(5, dev.volumeId());
            assertEquals("vol1", dev.name());
        }
    }

    @Test
    void anUnreachableNamenodeMakesTheCatalogUnavailable() throws Exception {
        try (FastClient offline = new FastClient(GatewayConfig.fromArgs("--namenode=http://127.0.0.1:" + deadPort()))) {
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> offline.open("iqn.2026-11.io.fastblock:vol1", "init").get(10, TimeUnit.SECONDS));
            assertEquals(DeviceException.Reason.UNAVAILABLE, assertInstanceOf(DeviceException.class, e.getCause()).reason());
            e = assertThrows(ExecutionException.class, () -> offline.targetNames("init").get(10, TimeUnit.SECONDS));
            assertEquals(DeviceException.Reason.UNAVAILABLE, assertInstanceOf(DeviceException.class, e.getCause()).reason());
        }
    }

    @Test
    void writesAndReadsGoThroughTheChainsAndUnallocatedChunksReadAsZeros() throws Exception {
        BlockDevice dev = get(client.open("iqn.2026-11.io.fastblock:vol1", "init")).orElseThrow();
        byte[] data = new byte[2 * CHUNK];
        new Random(1).nextBytes(data);
        long offset = 3L * CHUNK - 4096;
        ByteBuf buf = Unpooled.directBuffer(data.length).writeBytes(data);
        get(dev.write(offset, buf));
        assertEquals(1, buf.refCnt());
        buf.release();
        // Sequential reads of what was written, in 64 KiB pieces.
        for (int pos = 0; pos < data.length; pos += 65536) {
            ByteBuf got = get(dev.read(offset + pos, 65536));
            byte[] expected = java.util.Arrays.copyOfRange(data, pos, pos + 65536);
            assertArrayEquals(expected, ByteBufUtil.getBytes(got), "at " + pos);
            got.release();
        }
        ByteBuf zeros = get(dev.read(10L * CHUNK, 8192));
        assertArrayEquals(new byte[8192], ByteBufUtil.getBytes(zeros));
        zeros.release();
        assertEquals(3, namenode.allocated.size(), "chunks 2, 3, 4 allocated by the write only");
        assertTrue(namenode.requests.contains("GET /v1/volumes/vol1/chunks/10"));
        assertTrue(registry.counter("fastblock.gateway.reads", "volume", "vol1", "route", "middle").count() > 20,
                "sequential reads went to the middle");
        // The first two reads are random (a new stream); the first spans chunks 2 and 3: 3 head requests.
        assertEquals(3.0, registry.counter("fastblock.gateway.reads", "volume", "vol1", "route", "head").count());
        dev.close();
    }

    @Test
    void aWriteThroughOneDeviceDropsWhatAnotherReadAheadOfIt() throws Exception {
        // Two sessions of one volume on this gateway (two paths of a multipath device, say).
        BlockDevice reader = get(client.open("iqn.2026-11.io.fastblock:vol1", "init")).orElseThrow();
        BlockDevice writer = get(client.open("iqn.2026-11.io.fastblock:vol1", "init")).orElseThrow();
        byte[] data = new byte[512 << 10];
        new Random(21).nextBytes(data);
        ByteBuf buf = Unpooled.directBuffer(data.length).writeBytes(data);
        get(writer.write(0, buf));
        buf.release();
        for (int pos = 0; pos < 64 << 10; pos += 4096) {
            ByteBuf got = get(reader.read(pos, 4096));
            assertArrayEquals(java.util.Arrays.copyOfRange(data, pos, pos + 4096), ByteBufUtil.getBytes(got), "at " + pos);
            got.release();
        }
        double ahead = registry.counter("fastblock.gateway.reads", "volume", "vol1", "route", "read-ahead").count();
        assertTrue(ahead >= 10, "the reader's stream was answered from its read-ahead: " + ahead);
        // The other device changes bytes the reader has read ahead (its windows reach past 128 KiB by now).
        byte[] changed = new byte[8192];
        new Random(22).nextBytes(changed);
        System.arraycopy(changed, 0, data, 96 << 10, changed.length);
        buf = Unpooled.directBuffer(changed.length).writeBytes(changed);
        get(writer.write(96 << 10, buf));
        buf.release();
        for (int pos = 64 << 10; pos < 256 << 10; pos += 4096) {
            ByteBuf got = get(reader.read(pos, 4096));
            assertArrayEquals(java.util.Arrays.copyOfRange(data, pos, pos + 4096), ByteBufUtil.getBytes(got), "at " + pos);
            got.release();
        }
        reader.close();
        writer.close();
    }

    @Test
    void aWriteFollowsTheChainWhenTheHeadDies() throws Exception {
        FastVolume dev = get(client.openVolume("vol2"));
        ByteBuf first = Unpooled.directBuffer(4096).writeZero(4096);
        get(dev.write(0, first));
        first.release();
        nodes.get(0).close();
        namenode.setChain(2, List.of(nodes.get(1).address(), nodes.get(2).address()));
        byte[] data = new byte[4096];
        new Random(2).nextBytes(data);
        ByteBuf second = Unpooled.directBuffer(4096).writeBytes(data);
        get(dev.write(0, second));
        second.release();
        ByteBuf back = get(dev.read(0, 4096));
        assertArrayEquals(data, ByteBufUtil.getBytes(back));
        back.release();
        assertEquals(1.0, registry.counter("fastblock.gateway.retries", "volume", "vol2", "reason", "connection").count());
    }

    @Test
    void chunksDroppedFromAFullChunkMapAreAskedForAgainAndKeepTheirData() throws Exception {
        namenode.addVolume("big", 7, 2048L * CHUNK, CHUNK);
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        try (FastClient small = new FastClient(GatewayConfig.fromArgs("--namenode=" + namenode.url(),
                "--chunk-map-entries=1024", "--read-ahead=0"), meters)) {
            FastVolume big = get(small.openVolume("big"));
            FastVolume other = get(small.openVolume("vol1"));
            byte[] data = new byte[8192];
            new Random(3).nextBytes(data);
            ByteBuf buf = Unpooled.directBuffer(data.length).writeBytes(data);
            get(big.write(CHUNK - 4096, buf)); // the ends of chunks 0 and 1
            get(other.write(0, buf.readerIndex(0)));
            buf.release();
            // One block of each of 1 100 chunks: more than the two volumes may keep together.
            for (long chunk = 2; chunk < 1102; chunk++) {
                ByteBuf zeros = get(big.read(chunk * CHUNK, 4096));
                assertEquals(-1, zeros.forEachByte(b -> b == 0), "chunk " + chunk);
                zeros.release();
            }
            assertEquals(1024.0, meters.get("fastblock.gateway.chunk.map.entries").gauge().value());
            assertTrue(meters.get("fastblock.gateway.chunk.map.evictions").functionCounter().count() >= 1100 + 3 - 1024);
            assertTrue(big.chunkMap().size() + other.chunkMap().size() <= 1024);
            assertEquals(null, big.chunkMap().cachedRoute(0), "the first chunks were dropped");
            for (FastVolume v : List.of(big, other)) {
                long at = v == big ? CHUNK - 4096 : 0;
                ByteBuf back = get(v.read(at, data.length));
                assertArrayEquals(data, ByteBufUtil.getBytes(back), v.name());
                back.release();
            }
            ByteBuf again = Unpooled.directBuffer(4096).writeBytes(data, 4096, 4096);
            get(big.write(CHUNK - 4096, again)); // chunk 0 allocated again: the namenode's answer is its old place
            again.release();
            ByteBuf back = get(big.read(CHUNK - 4096, data.length));
            byte[] expected = data.clone();
            System.arraycopy(data, 4096, expected, 0, 4096);
            assertArrayEquals(expected, ByteBufUtil.getBytes(back));
            back.release();
        }
    }

    @Test
    void everyVolumeReadAndWriteIsTimedInTheVolumesBuckets() throws Exception {
        FastVolume dev = get(client.openVolume("vol2"));
        for (int i = 0; i < 3; i++) {
            ByteBuf buf = Unpooled.directBuffer(4096).writeZero(4096);
            get(dev.write(i * 4096L, buf));
            buf.release();
        }
        for (int i = 0; i < 5; i++) {
            get(dev.read(i * 8192L, 8192)).release();
        }
        assertThrows(ExecutionException.class, () -> get(dev.read(4L * CHUNK, 512)), "beyond the end: refused, not timed");
        io.micrometer.core.instrument.Timer reads = registry.get("fastblock.gateway.latency")
                .tags("volume", "vol2", "op", "read").timer();
        io.micrometer.core.instrument.Timer writes = registry.get("fastblock.gateway.latency")
                .tags("volume", "vol2", "op", "write").timer();
        assertEquals(5, reads.count());
        assertEquals(3, writes.count());
        assertTrue(reads.totalTime(TimeUnit.NANOSECONDS) > 0 && writes.totalTime(TimeUnit.NANOSECONDS) > 0);
        io.micrometer.core.instrument.distribution.CountAtBucket[] buckets = writes.takeSnapshot().histogramCounts();
        assertEquals(ClientMetrics.LATENCY_BUCKETS.length, buckets.length);
        assertEquals(3.0, buckets[buckets.length - 1].count(), "all within 15 s");
        get(client.openVolume("vol1")).read(0, 512).get(10, TimeUnit.SECONDS).release();
        assertEquals(1, registry.get("fastblock.gateway.latency").tags("volume", "vol1", "op", "read").timer().count(),
                "another volume's reads have a timer of their own");
        assertEquals(5, reads.count());
    }

    @Test
    void aVolumesMetersStayWhileADeviceOfItIsOpenAndGoWithTheLast() throws Exception {
        FastVolume one = get(client.openVolume("vol1"));
        FastVolume two = get(client.openVolume("vol1")); // a second session, or a multipath path
        FastVolume other = get(client.openVolume("vol2"));
        get(one.read(0, 512)).release();
        get(two.read(0, 512)).release();
        get(other.read(0, 512)).release();
        java.util.function.Supplier<io.micrometer.core.instrument.Timer> vol1Reads = () -> registry
                .find("fastblock.gateway.latency").tags("volume", "vol1", "op", "read").timer();
        assertEquals(2, vol1Reads.get().count(), "both devices count into the volume's meters");
        one.close();
        one.close(); // closing twice releases once
        get(two.read(0, 512)).release();
        assertEquals(3, vol1Reads.get().count(), "the volume is still open through the other device");
        two.close();
        assertEquals(null, vol1Reads.get());
        assertTrue(registry.getMeters().stream().noneMatch(m -> "vol1".equals(m.getId().getTag("volume"))),
                "no meter of vol1 is left");
        assertEquals(1, registry.get("fastblock.gateway.latency").tags("volume", "vol2", "op", "read").timer().count());
        FastVolume again = get(client.openVolume("vol1"));
        get(again.read(0, 512)).release();
        assertEquals(1, vol1Reads.get().count(), "opened again: counted afresh");
        again.close();
        other.close();
    }
}
