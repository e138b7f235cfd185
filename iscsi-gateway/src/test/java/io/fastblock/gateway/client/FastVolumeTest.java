package io.fastblock.gateway.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.gateway.scsi.DeviceException;
import io.fastblock.gateway.scsi.DeviceException.Reason;
import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.OpCode;
import io.fastblock.protocol.Status;
import io.fastblock.protocol.StorageResponse;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class FastVolumeTest {
    private static final int MIB = 1 << 20;
    private static final int CHUNK = MIB;
    private static final long SIZE = 8L * MIB;

    private final InMemoryCluster cluster = new InMemoryCluster(CHUNK, 3);
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final ClientSettings settings = new ClientSettings(Duration.ofSeconds(4), 4, Duration.ofMillis(1),
            Duration.ofSeconds(9), Duration.ofSeconds(30), 8, 128 * 1024, 2, 256 * 1024, 1, 1, Duration.ofSeconds(5));
    private final List<ByteBuf> toRelease = new ArrayList<>();

    private FastVolume volume(StorageTransport transport) {
        return volume(transport, settings);
    }

    private FastVolume volume(StorageTransport transport, ClientSettings settings) {
        VolumeInfo info = new VolumeInfo(42, "vol1", SIZE, 512, CHUNK, "iqn.2026-11.io.fastblock:vol1", "available",
                "2026-11-21T00:00:00Z", 0);
        return new FastVolume(info, new ChunkMapCache("vol1", cluster, settings.unallocatedTtl()), transport, settings,
                new ClientMetrics(registry, "vol1"), PooledByteBufAllocator.DEFAULT, Runnable::run);
    }

    private final FastVolume volume = volume(cluster);

    @AfterEach
    void releaseAndCheckLeaks() {
        toRelease.forEach(ByteBuf::release);
        for (ByteBuf b : cluster.handedOut) {
            assertEquals(0, b.refCnt(), "a read answer was not released");
        }
    }

    private static byte[] pattern(int length, long seed) {
        byte[] b = new byte[length];
        new Random(seed).nextBytes(b);
        return b;
    }

    private byte[] read(long offset, int length) throws Exception {
        ByteBuf buf = volume.read(offset, length).get(5, TimeUnit.SECONDS);
        try {
            assertEquals(length, buf.readableBytes());
            return ByteBufUtil.getBytes(buf);
        } finally {
            buf.release();
        }
    }

    private void write(long offset, byte[] bytes) throws Exception {
        ByteBuf buf = Unpooled.directBuffer(bytes.length).writeBytes(bytes);
        try {
            volume.write(offset, buf).get(5, TimeUnit.SECONDS);
            assertEquals(1, buf.refCnt(), "the volume kept a reference to the caller's buffer");
        } finally {
            buf.release();
        }
    }

    private static DeviceException failure(CompletableFuture<?> f) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(5, TimeUnit.SECONDS));
        return assertInstanceOf(DeviceException.class, e.getCause());
    }

    private double counter(String name, String... tags) {
        return registry.counter(name, tags).count();
    }

    @Test
    void readOfUnallocatedChunksIsZerosAndAllocatesNothing() throws Exception {
        byte[] got = read(CHUNK - 4096, 8192);
        assertArrayEquals(new byte[8192], got);
        assertEquals(0, cluster.allocations.get());
        assertEquals(2, cluster.lookups.get());
        assertTrue(cluster.sent.isEmpty(), "no storage request for unallocated chunks");
        assertEquals(2.0, counter("fastblock.gateway.reads", "volume", "vol1", "route", "zero-fill"));
    }

    @Test
    void unallocatedAnswerIsReusedUntilThisGatewayWritesTheChunk() throws Exception {
        read(0, 4096);
        read(8192, 4096);
        assertEquals(1, cluster.lookups.get(), "unallocated answer cached within its TTL");
        byte[] data = pattern(4096, 1);
        write(8192, data);
        assertArrayEquals(data, read(8192, 4096), "the write replaced the cached 'unallocated'");
        assertEquals(1, cluster.allocations.get());
    }

    @Test
    void unallocatedAnswerExpires() throws Exception {
        long[] now = {0};
        VolumeInfo info = new VolumeInfo(42, "vol1", SIZE, 512, CHUNK, "iqn", "available", "", 0);
        ChunkMapCache cache = new ChunkMapCache("vol1", cluster, Duration.ofMillis(100), () -> now[0],
                new ChunkMapBudget(ChunkMapBudget.DEFAULT_LIMIT));
        FastVolume v = new FastVolume(info, cache, cluster, settings, new ClientMetrics(registry, "vol1"),
                PooledByteBufAllocator.DEFAULT, Runnable::run);
        v.read(0, 512).get().release();
        now[0] += TimeUnit.MILLISECONDS.toNanos(99);
        v.read(0, 512).get().release();
        assertEquals(1, cluster.lookups.get());
        cluster.allocateChunk("vol1", 0); // another gateway allocates it
        now[0] += TimeUnit.MILLISECONDS.toNanos(1);
        v.read(0, 512).get().release();
        assertEquals(2, cluster.lookups.get());
        assertEquals(1.0, counter("fastblock.gateway.reads", "volume", "vol1", "route", "head"));
    }

    @Test
    void writeAndReadBackAcrossThreeChunksFromAnUnalignedStart() throws Exception {
        long offset = CHUNK - 512;
        byte[] data = pattern(2 * CHUNK + 1024, 2);
        write(offset, data);
        assertArrayEquals(data, read(offset, data.length));
        // Pieces of at most 256 KiB: 512 B in chunk 0, 4 x 256 KiB in chunks 1 and 2, 512 B in chunk 3.
        List<InMemoryCluster.Sent> writes = cluster.sent.stream().filter(s -> s.op() == OpCode.WRITE).toList();
        assertEquals(new ChunkId(42, 0), writes.get(0).chunk());
        assertEquals(CHUNK - 512, writes.get(0).offset());
        assertEquals(512, writes.get(0).length());
        assertEquals(new ChunkId(42, 1), writes.get(1).chunk());
        assertEquals(0, writes.get(1).offset());
        assertEquals(new ChunkId(42, 3), writes.get(writes.size() - 1).chunk());
        assertEquals(512, writes.get(writes.size() - 1).length());
        assertEquals(data.length, writes.stream().mapToInt(InMemoryCluster.Sent::length).sum());
        assertEquals(10, writes.size());
        for (InMemoryCluster.Sent w : writes) {
            assertEquals(new ChainAddress(1, 1, 0), w.chain(), "group, chain version and lease epoch 0");
            assertEquals(9401, w.node().port(), "writes go to the head");
        }
        assertEquals(4, cluster.allocations.get(), "each chunk allocated once");
    }

    @Test
    void readOfPartlyWrittenRangeMixesDataAndZeros() throws Exception {
        byte[] data = pattern(4096, 3);
        write(CHUNK + 4096, data);
        byte[] got = read(CHUNK - 4096, 3 * 4096);
        byte[] expected = new byte[3 * 4096];
        System.arraycopy(data, 0, expected, 8192, 4096);
        assertArrayEquals(expected, got);
        assertEquals(0, cluster.requestsTo("storage-1", OpCode.READ) - 1, "one storage read: chunk 0 is zero-filled");
    }

    @Test
    void writeSendsRetainedSlicesOfTheCallersBuffer() throws Exception {
        ByteBuf caller = Unpooled.directBuffer(8192).writeBytes(pattern(8192, 4));
        caller.readerIndex(1024); // only the readable bytes are written
        List<ByteBuf> seen = new ArrayList<>();
        StorageTransport spy = new ForwardingTransport(cluster) {
            @Override
            public CompletableFuture<StorageResponse> write(NodeAddress node, ChainAddress chain, ChunkId chunk,
                                                            long offset, ByteBuf data) {
                seen.add(data);
                // A view, not a copy: a change to the caller's bytes shows through it.
                int at = data.readerIndex();
                byte before = data.getByte(at);
                int callerIndex = 1024 + (seen.size() == 1 ? 0 : 4096);
                caller.setByte(callerIndex, ~caller.getByte(callerIndex));
                assertEquals((byte) ~before, data.getByte(at), "a slice, not a copy");
                caller.setByte(callerIndex, before);
                assertEquals(2, caller.refCnt(), "retained for the request");
                return cluster.write(node, chain, chunk, offset, data);
            }
            @Override
            public CompletableFuture<StorageResponse> trim(NodeAddress node, ChainAddress chain, ChunkId chunk,
                                                           long offset, int length) {
                return cluster.trim(node, chain, chunk, offset, length);
            }        };
        FastVolume v = volume(spy);
        v.write(CHUNK - 4096, caller).get(5, TimeUnit.SECONDS);
        assertEquals(2, seen.size());
        assertEquals(1, caller.refCnt());
        byte[] expected = ByteBufUtil.getBytes(caller);
        caller.release();
        ByteBuf back = v.read(CHUNK - 4096, 7168).get(5, TimeUnit.SECONDS);
        assertArrayEquals(expected, ByteBufUtil.getBytes(back));
        back.release();
    }

    @Test
    void randomReadsGoToTheHeadAndSequentialOnesToTheMiddle() throws Exception {
        write(0, pattern(CHUNK, 5));
        for (int i = 0; i < 10; i++) {
            read(i * 65536L, 65536);
        }
        assertEquals(2, cluster.requestsTo("storage-1", OpCode.READ), "a new stream starts random");
        assertEquals(8, cluster.requestsTo("storage-2", OpCode.READ));
        assertEquals(0, cluster.requestsTo("storage-3", OpCode.READ));
        assertEquals(8.0, counter("fastblock.gateway.reads", "volume", "vol1", "route", "middle"));
        assertEquals(2.0, counter("fastblock.gateway.reads", "volume", "vol1", "route", "head"));
        assertEquals(8.0, counter("fastblock.gateway.requests", "volume", "vol1", "op", "read", "pattern", "sequential"));
        assertEquals(4.0, counter("fastblock.gateway.writes", "volume", "vol1", "route", "head"));
    }

    @Test
    void sequentialSmallReadsComeFromReadAheadAndThisVolumesWritesAndTrimsDropIt() throws Exception {
        volume.useReadAhead(64 << 10, 4, Duration.ofSeconds(30), new ReadAhead.Budget(1 << 20), (o, l) -> { });
        byte[] data = pattern(512 << 10, 31);
        write(0, data);
        for (int pos = 0; pos < 96 << 10; pos += 4096) {
            assertArrayEquals(java.util.Arrays.copyOfRange(data, pos, pos + 4096), read(pos, 4096), "at " + pos);
        }
        // Two random reads start the stream. The third, the first sequential one, goes to the middle and
        // starts the window [12K, 76K); passing its middle starts [76K, 140K). One middle read per window.
        assertEquals(2, cluster.requestsTo("storage-1", OpCode.READ));
        assertEquals(3, cluster.requestsTo("storage-2", OpCode.READ));
        assertEquals(21.0, counter("fastblock.gateway.reads", "volume", "vol1", "route", "read-ahead"));
        // A write and a trim inside windows already read: the stream reads the new bytes.
        byte[] changed = pattern(4096, 32);
        write(100 << 10, changed);
        System.arraycopy(changed, 0, data, 100 << 10, 4096);
        assertEquals(0, volume.readAhead().windows(), "the write dropped the windows it overlaps");
        for (int pos = 96 << 10; pos < 144 << 10; pos += 4096) {
            assertArrayEquals(java.util.Arrays.copyOfRange(data, pos, pos + 4096), read(pos, 4096), "at " + pos);
        }
        volume.unmap(160 << 10, 8192).get(5, TimeUnit.SECONDS);
        java.util.Arrays.fill(data, 160 << 10, (160 << 10) + 8192, (byte) 0);
        for (int pos = 144 << 10; pos < 256 << 10; pos += 4096) {
            assertArrayEquals(java.util.Arrays.copyOfRange(data, pos, pos + 4096), read(pos, 4096), "at " + pos);
        }
        volume.close();
        assertEquals(0, volume.readAhead().windows(), "closing releases what was read ahead");
    }

    @Test
    void aWindowReadWhileAWriteWasOutIsDroppedWhenTheWriteCompletes() throws Exception {
        // Writes held back whole (not yet on the replicas) until released.
        List<Runnable> heldWrites = new ArrayList<>();
        StorageTransport gated = new StorageTransport() {
            @Override
            public CompletableFuture<StorageResponse> write(NodeAddress node,
                    ChainAddress chain, ChunkId chunk, long offset, ByteBuf buf) {
                CompletableFuture<StorageResponse> answer = new CompletableFuture<>();
                heldWrites.add(() -> cluster.write(node, chain, chunk, offset, buf).whenComplete((r, e) -> answer.complete(r)));
                return answer;
            }

            @Override
            public CompletableFuture<StorageResponse> read(NodeAddress node,
                    ChainAddress chain, ChunkId chunk, long offset, int length) {
                return cluster.read(node, chain, chunk, offset, length);
            }

            @Override
            public CompletableFuture<StorageResponse> trim(NodeAddress node,
                    ChainAddress chain, ChunkId chunk, long offset, int length) {
                return cluster.trim(node, chain, chunk, offset, length);
            }

            @Override
            public CompletableFuture<StorageResponse> extents(NodeAddress node,
                    ChainAddress chain, ChunkId chunk, long offset, int length) {
                return cluster.extents(node, chain, chunk, offset, length);
            }
        };
        byte[] data = pattern(256 << 10, 33);
        write(0, data);
        FastVolume v = volume(gated);
        v.useReadAhead(64 << 10, 4, Duration.ofSeconds(30), new ReadAhead.Budget(1 << 20), (o, l) -> { });
        for (int pos = 0; pos < 40 << 10; pos += 4096) {
            ByteBuf b = v.read(pos, 4096).get(5, TimeUnit.SECONDS);
            b.release();
        }
        // A write into [76K, 140K) goes out; while it is out the stream reaches that window, read before the write lands.
        byte[] changed = pattern(4096, 34);
        ByteBuf w = Unpooled.directBuffer(4096).writeBytes(changed);
        CompletableFuture<Void> writing = v.write(100 << 10, w);
        for (int pos = 40 << 10; pos < 80 << 10; pos += 4096) {
            ByteBuf b = v.read(pos, 4096).get(5, TimeUnit.SECONDS);
            b.release();
        }
        assertEquals(1, heldWrites.size());
        heldWrites.remove(0).run();
        writing.get(5, TimeUnit.SECONDS);
        w.release();
        ByteBuf b = v.read(100 << 10, 4096).get(5, TimeUnit.SECONDS);
        assertArrayEquals(changed, ByteBufUtil.getBytes(b), "the window read before the write landed was dropped");
        b.release();
        v.close();
    }

    @Test
    void aStaleChainIsRefreshedAndTheReadResent() throws Exception {
        byte[] data = pattern(4096, 6);
        write(0, data);
        cluster.bumpChain(new GroupInfo(1, 2, cluster.group.members()));
        int lookups = cluster.lookups.get();
        assertArrayEquals(data, read(0, 4096));
        assertEquals(lookups + 1, cluster.lookups.get());
        List<InMemoryCluster.Sent> reads = cluster.sent.stream().filter(s -> s.op() == OpCode.READ).toList();
        assertEquals(2, reads.size());
        assertEquals(2, reads.get(1).chain().chainVersion());
        assertEquals(1.0, counter("fastblock.gateway.retries", "volume", "vol1", "reason", "stale_chain"));
    }

    @Test
    void aWriteToAMovedChainIsReallocatedAndResent() throws Exception {
        write(0, pattern(4096, 7));
        List<GroupMember> old = cluster.group.members();
        // storage-1 left the chain: storage-2 is the new head, storage-4 joined as tail.
        cluster.bumpChain(new GroupInfo(1, 2, List.of(old.get(1), old.get(2),
                new GroupMember("storage-4", "127.0.0.1", 9404, true))));
        byte[] data = pattern(4096, 8);
        write(0, data);
        InMemoryCluster.Sent last = cluster.sent.get(cluster.sent.size() - 1);
        assertEquals(9402, last.node().port());
        assertEquals(2, last.chain().chainVersion());
        assertEquals(2, cluster.allocations.get(), "allocation asked again after the refusal");
        assertArrayEquals(data, read(0, 4096));
    }

    @Test
    void retriesAreBoundedAndEndInIoError() {
        write0();
        for (int i = 0; i < 10; i++) {
            cluster.script.add(Status.UNKNOWN_GROUP);
        }
        int before = cluster.sent.size();
        DeviceException e = failure(volume.read(0, 4096));
        assertEquals(Reason.IO_ERROR, e.reason());
        assertEquals(settings.maxAttempts(), cluster.sent.size() - before);
    }

    @Test
    void noSpaceFailsTheWriteWithoutRetry() {
        cluster.script.add(Status.NO_SPACE);
        ByteBuf buf = Unpooled.directBuffer(4096).writeZero(4096);
        toRelease.add(buf);
        assertEquals(Reason.NO_SPACE, failure(volume.write(0, buf)).reason());
        assertEquals(1, cluster.sent.size());
        assertEquals(1, buf.refCnt());
    }

    @Test
    void staleEpochIsFenced() {
        cluster.script.add(Status.STALE_EPOCH);
        ByteBuf buf = Unpooled.directBuffer(512).writeZero(512);
        toRelease.add(buf);
        assertEquals(Reason.FENCED, failure(volume.write(0, buf)).reason());
    }

    @Test
    void corruptionIsAMediumErrorAtOnce() {
        write0();
        int before = cluster.sent.size();
        cluster.script.add(Status.CORRUPT);
        assertEquals(Reason.IO_ERROR, failure(volume.read(0, 512)).reason());
        assertEquals(1, cluster.sent.size() - before);
    }

    @Test
    void anIoErrorIsRetriedAtTheNextMemberAfterARouteRefresh() throws Exception {
        byte[] data = pattern(4096, 12);
        write(0, data);
        int lookups = cluster.lookups.get();
        cluster.script.add(Status.IO_ERROR);
        assertArrayEquals(data, read(0, 4096));
        List<InMemoryCluster.Sent> reads = cluster.sent.stream().filter(s -> s.op() == OpCode.READ).toList();
        assertEquals(9401, reads.get(0).node().port(), "random: the head first");
        assertEquals(9402, reads.get(1).node().port(), "then the middle");
        assertEquals(lookups + 1, cluster.lookups.get(), "the route was asked again");
        assertEquals(1.0, counter("fastblock.gateway.retries", "volume", "vol1", "reason", "io_error"));
    }

    @Test
    void readRetriesWalkHeadMiddleTailInTurn() throws Exception {
        byte[] data = pattern(4096, 13);
        write(0, data);
        NodeAddress n = new NodeAddress("127.0.0.1", 9401);
        cluster.script.add(new StorageRequestException(StorageRequestException.Kind.TIMEOUT, n, "no answer", null));
        cluster.script.add(Status.IO_ERROR);
        cluster.script.add(new StorageRequestException(StorageRequestException.Kind.CONNECTION_LOST, n, "reset", null));
        assertArrayEquals(data, read(0, 4096));
        List<Integer> ports = cluster.sent.stream().filter(s -> s.op() == OpCode.READ).map(s -> s.node().port()).toList();
        assertEquals(List.of(9401, 9402, 9403, 9401), ports);
        assertEquals(1.0, counter("fastblock.gateway.retries", "volume", "vol1", "reason", "timeout"));
    }

    @Test
    void aWriteIsResentAfterATimeoutAndAnIoErrorWithItsRouteAskedAgain() throws Exception {
        write0();
        int allocations = cluster.allocations.get();
        cluster.script.add(new StorageRequestException(StorageRequestException.Kind.TIMEOUT,
                new NodeAddress("127.0.0.1", 9401), "no answer", null));
        cluster.script.add(Status.IO_ERROR);
        byte[] data = pattern(4096, 14);
        write(0, data);
        List<InMemoryCluster.Sent> writes = cluster.sent.stream().filter(s -> s.op() == OpCode.WRITE).toList();
        assertEquals(4, writes.size(), "write0, then three tries of the same bytes");
        assertEquals(writes.get(1).offset(), writes.get(3).offset());
        assertEquals(allocations + 2, cluster.allocations.get(), "the route asked again after each failure");
        assertArrayEquals(data, read(0, 4096));
    }

    @Test
    void busyIsRetriedWithoutAskingTheNamenode() throws Exception {
        byte[] data = pattern(4096, 15);
        write(0, data);
        int lookups = cluster.lookups.get();
        cluster.script.add(Status.BUSY);
        assertArrayEquals(data, read(0, 4096));
        assertEquals(lookups, cluster.lookups.get());
    }

    @Test
    void mergedWritesFitOneStorageRequest() {
        assertEquals(64 << 10, volume.coalescedWriteBytes());
        ClientSettings smallRequests = new ClientSettings(Duration.ofSeconds(4), 4, Duration.ofMillis(1),
                Duration.ofSeconds(9), Duration.ofSeconds(30), 8, 128 * 1024, 2, 24 * 1024, 1, 1, Duration.ofSeconds(5));
        assertEquals(16 << 10, volume(cluster, smallRequests).coalescedWriteBytes(), "a power of two within 24 KiB");
    }

    @Test
    void theRetryBudgetEndsTheRetriesNotTheAttemptCount() {
        write0();
        // An IO_ERROR on every try, for ever: retries go on for the budget, then the last failure is final.
        ClientSettings shortBudget = new ClientSettings(Duration.ofMillis(100), 1000, Duration.ofMillis(5),
                Duration.ofMillis(400), Duration.ofSeconds(30), 8, 128 * 1024, 2, 256 * 1024, 1, 1, Duration.ofSeconds(5));
        StorageTransport failing = new ForwardingTransport(cluster) {
            @Override
            public CompletableFuture<StorageResponse> write(NodeAddress node, ChainAddress chain, ChunkId chunk,
                                                            long offset, ByteBuf data) {
                data.release();
                return CompletableFuture.completedFuture(StorageResponse.error(0, OpCode.WRITE, Status.IO_ERROR, "x"));
            }

            @Override
            public CompletableFuture<StorageResponse> read(NodeAddress node, ChainAddress chain, ChunkId chunk,
                                                           long offset, int length) {
                cluster.sent.add(new InMemoryCluster.Sent(OpCode.READ, node, chain, chunk, offset, length));
                return CompletableFuture.completedFuture(StorageResponse.error(0, OpCode.READ, Status.IO_ERROR, "x"));
            }
            @Override
            public CompletableFuture<StorageResponse> extents(NodeAddress node, ChainAddress chain, ChunkId chunk,
                                                              long offset, int length) {
                return cluster.extents(node, chain, chunk, offset, length);
            }
        };
        FastVolume v = volume(failing, shortBudget);
        int before = cluster.sent.size();
        long t0 = System.nanoTime();
        assertEquals(Reason.IO_ERROR, failure(v.read(0, 512)).reason());
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        int tries = cluster.sent.size() - before;
        assertTrue(tries > 4, "retried while the budget lasted, " + tries + " tries");
        assertTrue(tries < 1000, "stopped by the budget, not the attempt cap");
        // Retrying stops when elapsed + next backoff + a minimal attempt (25 ms) would pass the 400 ms
        // budget; backoffs double, so the next one is at most the time spent so far (+5 ms): whatever
        // the machine's load, giving up before 185 ms means the budget was not what ended it.
        assertTrue(tookMs >= 185, "gave up after " + tookMs + " ms, before the budget was spent");
    }

    @Test
    void theLastAttemptIsCutAtTheBudgetsEndAndItsLateAnswerReleased() throws Exception {
        byte[] data = pattern(4096, 16);
        write(0, data);
        // 250 ms per attempt, 500 ms budget: the first try times out at 250 ms, the second may only
        // run until 500 ms, and its answer comes at 1 s.
        ClientSettings tight = new ClientSettings(Duration.ofMillis(250), 10, Duration.ofMillis(1),
                Duration.ofMillis(500), Duration.ofSeconds(30), 8, 128 * 1024, 2, 256 * 1024, 1, 1, Duration.ofSeconds(5));
        CompletableFuture<StorageResponse> late = new CompletableFuture<>();
        ByteBuf lateData = Unpooled.directBuffer(512).writeZero(512);
        List<NodeAddress> tried = new ArrayList<>();
        StorageTransport slow = new ForwardingTransport(cluster) {
            @Override
            public CompletableFuture<StorageResponse> write(NodeAddress node, ChainAddress chain, ChunkId chunk,
                                                            long offset, ByteBuf b) {
                b.release();
                throw new AssertionError("no writes here");
            }

            @Override
            public CompletableFuture<StorageResponse> read(NodeAddress node, ChainAddress chain, ChunkId chunk,
                                                           long offset, int length) {
                tried.add(node);
                if (tried.size() == 1) {
                    return CompletableFuture.supplyAsync(() -> {
                        throw new StorageRequestException(StorageRequestException.Kind.TIMEOUT, node, "no answer", null);
                    }, CompletableFuture.delayedExecutor(250, TimeUnit.MILLISECONDS));
                }
                return late;
            }
            @Override
            public CompletableFuture<StorageResponse> extents(NodeAddress node, ChainAddress chain, ChunkId chunk,
                                                              long offset, int length) {
                return cluster.extents(node, chain, chunk, offset, length);
            }
        };
        FastVolume v = volume(slow, tight);
        DeviceException e = failure(v.read(0, 512));
        assertEquals(Reason.IO_ERROR, e.reason());
        assertTrue(e.getMessage().contains("retry budget"), e.getMessage());
        assertEquals(2, tried.size());
        assertTrue(!late.isDone(), "the volume request ended before the late answer");
        late.complete(StorageResponse.ok(0, OpCode.READ, lateData));
        assertEquals(0, lateData.refCnt(), "the answer after the cut was released");
    }

    @Test
    void aFailedPieceReleasesTheOtherPiecesOfTheRead() throws Exception {
        write(0, pattern(2 * CHUNK, 9));
        cluster.script.add(Status.CORRUPT); // the first piece fails, the others succeed
        DeviceException e = failure(volume.read(CHUNK - 512, 1024));
        assertEquals(Reason.IO_ERROR, e.reason());
        assertTrue(e.getMessage().contains("42/0"), e.getMessage());
        assertEquals(1, cluster.handedOut.size());
        // releaseAndCheckLeaks asserts the successful piece was released
    }

    @Test
    void timeoutsUntilTheAttemptsRunOutEndInIoError() {
        write0();
        for (int i = 0; i < settings.maxAttempts(); i++) {
            cluster.script.add(new StorageRequestException(StorageRequestException.Kind.TIMEOUT,
                    new NodeAddress("127.0.0.1", 9401), "no answer", null));
        }
        int before = cluster.sent.size();
        assertEquals(Reason.IO_ERROR, failure(volume.read(0, 512)).reason());
        assertEquals(settings.maxAttempts(), cluster.sent.size() - before);
    }

    @Test
    void aLostConnectionToTheMiddleIsRetriedAtTheHead() throws Exception {
        byte[] data = pattern(CHUNK, 10);
        write(0, data);
        read(0, 4096);
        read(4096, 4096);
        cluster.script.add(new StorageRequestException(StorageRequestException.Kind.CONNECTION_LOST,
                new NodeAddress("127.0.0.1", 9402), "reset", null));
        byte[] got = read(8192, 4096);
        assertArrayEquals(java.util.Arrays.copyOfRange(data, 8192, 12288), got);
        List<InMemoryCluster.Sent> reads = cluster.sent.stream().filter(s -> s.op() == OpCode.READ).toList();
        assertEquals(9402, reads.get(2).node().port(), "sequential: the middle first");
        assertEquals(9401, reads.get(3).node().port(), "then the head");
    }

    @Test
    void namenodeUnreachableForTheWholeBudgetMakesTheVolumeUnavailable() {
        ClientSettings shortBudget = new ClientSettings(Duration.ofMillis(100), 1000, Duration.ofMillis(5),
                Duration.ofMillis(300), Duration.ofSeconds(30), 8, 128 * 1024, 2, 256 * 1024, 1, 1, Duration.ofSeconds(5));
        FastVolume v = volume(cluster, shortBudget);
        cluster.namenodeFailure = new NamenodeUnavailableException("down", null);
        assertEquals(Reason.UNAVAILABLE, failure(v.read(0, 512)).reason());
        ByteBuf buf = Unpooled.directBuffer(512).writeZero(512);
        toRelease.add(buf);
        assertEquals(Reason.UNAVAILABLE, failure(v.write(0, buf)).reason());
        assertEquals(1, buf.refCnt());
        assertTrue(cluster.lookups.get() + cluster.allocations.get() > 2, "the namenode was asked again");
    }

    @Test
    void aNamenodeThatCannotAnswerForAMomentIsAskedAgainWithinTheBudget() throws Exception {
        ClientSettings patient = new ClientSettings(Duration.ofSeconds(1), 1000, Duration.ofMillis(5),
                Duration.ofSeconds(9), Duration.ofSeconds(30), 8, 128 * 1024, 2, 256 * 1024, 1, 1, Duration.ofSeconds(5));
        FastVolume v = volume(cluster, patient);
        cluster.namenodeFailure = new NamenodeUnavailableException("failing over", null);
        java.util.concurrent.ScheduledExecutorService later = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
        try {
            later.schedule(() -> cluster.namenodeFailure = null, 200, TimeUnit.MILLISECONDS);
            byte[] data = pattern(4096, 31);
            ByteBuf buf = Unpooled.directBuffer(4096).writeBytes(data);
            toRelease.add(buf);
            v.write(CHUNK, buf).get(5, TimeUnit.SECONDS); // allocation asked again until the namenode answers
            assertArrayEquals(data, read(CHUNK, 4096));
        } finally {
            later.shutdownNow();
        }
        cluster.namenodeFailure = new NamenodeException(404, "VOLUME_NOT_FOUND", "gone");
        volume.chunkMap().clear();
        long t0 = System.nanoTime();
        assertEquals(Reason.UNAVAILABLE, failure(volume.read(0, 512)).reason());
        assertTrue(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0) < 5, "a 404 is final, not retried");
    }

    @Test
    void rangesOutsideTheVolumeAreRefused() throws Exception {
        assertEquals(Reason.OUT_OF_RANGE, failure(volume.read(SIZE - 512, 1024)).reason());
        assertEquals(Reason.OUT_OF_RANGE, failure(volume.read(-512, 512)).reason());
        assertEquals(Reason.OUT_OF_RANGE, failure(volume.read(Long.MAX_VALUE, 512)).reason());
        ByteBuf buf = Unpooled.directBuffer(512).writeZero(512);
        toRelease.add(buf);
        assertEquals(Reason.OUT_OF_RANGE, failure(volume.write(SIZE, buf)).reason());
        assertArrayEquals(new byte[512], read(SIZE - 512, 512), "the last block is inside");
        assertTrue(cluster.sent.isEmpty());
    }

    @Test
    void describesTheVolume() {
        assertEquals(SIZE, volume.sizeBytes());
        assertEquals(512, volume.blockSize());
        assertEquals(42, volume.volumeId());
        assertEquals("vol1", volume.name());
    }

    @Test
    void closedVolumeRefusesIo() {
        volume.close();
        assertEquals(Reason.UNAVAILABLE, failure(volume.read(0, 512)).reason());
    }

    private List<io.fastblock.gateway.scsi.BlockDevice.Extent> status(long offset, long length) throws Exception {
        return volume.lbaStatus(offset, length).get(5, TimeUnit.SECONDS);
    }

    @Test
    void unmapTrimsWholeBlocksZeroWritesPartialOnesAndSkipsUnallocatedChunks() throws Exception {
        assertTrue(volume.thinProvisioned());
        byte[] data = pattern(3 * CHUNK, 21);
        write(0, data); // chunks 0-2 allocated; 3-7 never written
        int before = cluster.sent.size();
        // From 512 bytes into chunk 0 to 1 KiB into chunk 2, then on into chunk 4 which was never written.
        volume.unmap(512, 2L * CHUNK + 512).get(5, TimeUnit.SECONDS);
        List<InMemoryCluster.Sent> sent = new ArrayList<>(cluster.sent.subList(before, cluster.sent.size()));
        long trims = sent.stream().filter(x -> x.length() < 0).count();
        long zeroWrites = sent.stream().filter(x -> x.op() == OpCode.WRITE && x.length() > 0).count();
        assertEquals(2, trims, "chunks 0 and 1 (chunk 2's part holds no whole block): " + sent);
        assertEquals(2, zeroWrites, "the partial blocks at both ends: " + sent);
        assertTrue(sent.stream().allMatch(x -> x.chunk().index() <= 2), "chunks never allocated get nothing");
        byte[] now = read(0, 3 * CHUNK);
        assertArrayEquals(java.util.Arrays.copyOf(data, 512), java.util.Arrays.copyOf(now, 512), "before the range");
        assertArrayEquals(new byte[2 * CHUNK + 512], java.util.Arrays.copyOfRange(now, 512, 2 * CHUNK + 1024));
        assertArrayEquals(java.util.Arrays.copyOfRange(data, 2 * CHUNK + 1024, 3 * CHUNK),
                java.util.Arrays.copyOfRange(now, 2 * CHUNK + 1024, 3 * CHUNK), "after the range");
        // Every replica gave the whole blocks back; the partial blocks stay allocated (zeros written).
        for (String member : List.of("storage-1", "storage-2", "storage-3")) {
            assertEquals(java.util.Set.of(0), bits(member, 0), member);
            assertEquals(java.util.Set.of(), bits(member, 1), member);
            java.util.Set<Integer> third = bits(member, 2);
            assertEquals(CHUNK / 4096, third.size(), "chunk 2's first block stays (zero-written): " + member);
        }
    }

    private java.util.Set<Integer> bits(String member, long chunk) {
        java.util.BitSet b = cluster.blocks.get(member).get(chunk);
        return b == null ? java.util.Set.of() : b.stream().boxed().collect(java.util.stream.Collectors.toSet());
    }

    @Test
    void lbaStatusTellsMappedFromDeallocated() throws Exception {
        write(CHUNK + 8192, pattern(4096, 3));
        List<io.fastblock.gateway.scsi.BlockDevice.Extent> runs = status(0, 2L * CHUNK);
        assertEquals(List.of(new io.fastblock.gateway.scsi.BlockDevice.Extent(0, CHUNK + 8192, false),
                new io.fastblock.gateway.scsi.BlockDevice.Extent(CHUNK + 8192, 4096, true),
                new io.fastblock.gateway.scsi.BlockDevice.Extent(CHUNK + 12288, CHUNK - 12288, false)), runs);
        volume.unmap(CHUNK + 8192, 4096).get(5, TimeUnit.SECONDS);
        assertEquals(List.of(new io.fastblock.gateway.scsi.BlockDevice.Extent(CHUNK, CHUNK, false)), status(CHUNK, CHUNK));
        // A failing head: another member answers.
        write(0, pattern(512, 4));
        cluster.script.add(Status.IO_ERROR);
        assertEquals(new io.fastblock.gateway.scsi.BlockDevice.Extent(0, 4096, true), status(0, CHUNK).get(0));
    }

    /** An EXTENTS request a test holds: answered when the test completes {@code answer}. */
    private record Asked(NodeAddress node, ChainAddress chain, ChunkId chunk, long offset, int length,
                         CompletableFuture<StorageResponse> answer) {
    }

    @Test
    void lbaStatusAsksTheChunksAllAtOnceAndReportsThemInOrder() throws Exception {
        write(8192, pattern(4096, 6)); // chunk 0: one block
        for (int c : new int[] {1, 3, 4, 5}) {
            write((long) c * CHUNK, pattern(CHUNK, 10 + c)); // whole chunks; chunk 2 never written
        }
        java.util.concurrent.ConcurrentLinkedQueue<Asked> asked = new java.util.concurrent.ConcurrentLinkedQueue<>();
        StorageTransport held = new ForwardingTransport(cluster) {
            @Override
            public CompletableFuture<StorageResponse> extents(NodeAddress node, ChainAddress chain, ChunkId chunk,
                                                              long offset, int length) {
                Asked a = new Asked(node, chain, chunk, offset, length, new CompletableFuture<>());
                asked.add(a);
                return a.answer();
            }
        };
        FastVolume v = volume(held);
        CompletableFuture<List<io.fastblock.gateway.scsi.BlockDevice.Extent>> f = v.lbaStatus(0, SIZE);
        // The first four chunks are looked at together: three allocated ones asked at once.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (asked.size() < 3 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals(List.of(0L, 1L, 3L), asked.stream().map(a -> a.chunk().index()).sorted().toList(),
                "chunks 0, 1 and 3 asked before any answer");
        assertTrue(!f.isDone());
        // Answered last first: the runs still come out in volume order.
        List<Asked> first = new ArrayList<>(asked);
        asked.clear();
        java.util.Collections.reverse(first);
        for (Asked a : first) {
            a.answer().complete(cluster.extents(a.node(), a.chain(), a.chunk(), a.offset(), a.length()).join());
        }
        // Three chunks asked: one more may be (chunk 4); chunk 5 is past the four-chunk limit.
        while (asked.isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        Asked fourth = asked.poll();
        assertEquals(4L, fourth.chunk().index());
        fourth.answer().complete(cluster.extents(fourth.node(), fourth.chain(), fourth.chunk(), fourth.offset(),
                fourth.length()).join());
        assertEquals(List.of(new io.fastblock.gateway.scsi.BlockDevice.Extent(0, 8192, false),
                new io.fastblock.gateway.scsi.BlockDevice.Extent(8192, 4096, true),
                new io.fastblock.gateway.scsi.BlockDevice.Extent(12288, CHUNK - 12288, false),
                new io.fastblock.gateway.scsi.BlockDevice.Extent(CHUNK, CHUNK, true),
                new io.fastblock.gateway.scsi.BlockDevice.Extent(2L * CHUNK, CHUNK, false),
                new io.fastblock.gateway.scsi.BlockDevice.Extent(3L * CHUNK, 2L * CHUNK, true)),
                f.get(5, TimeUnit.SECONDS));
        assertTrue(asked.isEmpty(), "nothing asked past the limit: " + asked);
    }

    @Test
    void concurrentStatusQueriesShareRequestsAndStillSeeAWriteCompletedBeforeThem() throws Exception {
        write(0, pattern(4096, 6)); // chunk 0: block 0 only
        java.util.concurrent.LinkedBlockingQueue<Asked> asked = new java.util.concurrent.LinkedBlockingQueue<>();
        StorageTransport held = new ForwardingTransport(cluster) {
            @Override
            public CompletableFuture<StorageResponse> extents(NodeAddress node, ChainAddress chain, ChunkId chunk,
                                                              long offset, int length) {
                // The state at the time the request is sent, answered when the test lets it.
                StorageResponse now = cluster.extents(node, chain, chunk, offset, length).join();
                Asked a = new Asked(node, chain, chunk, offset, length, new CompletableFuture<>());
                asked.add(a);
                return a.answer().thenApply(ignored -> now);
            }
        };
        FastVolume v = volume(held);
        // qemu's burst: 32 queries at once about the same chunk, from different offsets.
        List<CompletableFuture<List<io.fastblock.gateway.scsi.BlockDevice.Extent>>> burst = new ArrayList<>();
        burst.add(v.lbaStatus(0, CHUNK));
        Asked firstRequest = asked.poll(10, TimeUnit.SECONDS);
        assertEquals(0, firstRequest.offset());
        assertEquals(CHUNK, firstRequest.length(), "the whole chunk is asked, so others can share the answer");
        // A write completes while that request is out; every query from now on must show it.
        write(8192, pattern(4096, 7));
        for (int i = 1; i < 32; i++) {
            burst.add(v.lbaStatus(i * 4096L, CHUNK - i * 4096L));
        }
        Thread.sleep(50);
        assertTrue(asked.isEmpty(), "nothing more is sent while one request is out: " + asked);
        firstRequest.answer().complete(null);
        assertEquals(List.of(new io.fastblock.gateway.scsi.BlockDevice.Extent(0, 4096, true),
                new io.fastblock.gateway.scsi.BlockDevice.Extent(4096, CHUNK - 4096, false)), burst.get(0).get(5, TimeUnit.SECONDS),
                "the first query was asked before the write");
        Asked shared = asked.poll(10, TimeUnit.SECONDS);
        assertTrue(shared != null, "one request for the other 31");
        shared.answer().complete(null);
        for (int i = 1; i < 32; i++) {
            // Blocks 0 and 2 written, the second while the first request was out: clipped to the query.
            List<io.fastblock.gateway.scsi.BlockDevice.Extent> expected = new ArrayList<>();
            ProvisioningMap.append(expected, 0, i * 4096L, CHUNK, new io.fastblock.protocol.Extents.Builder()
                    .add(0, 4096).add(8192, 4096).build());
            assertEquals(expected, burst.get(i).get(5, TimeUnit.SECONDS),
                    "query " + i + " came after the write completed and shows it");
        }
        assertTrue(asked.isEmpty(), "two requests in all for 32 queries: " + asked);
    }

    @Test
    void unmapIsRefusedOutsideTheVolumeAndReportsRefusedTrims() throws Exception {
        assertEquals(Reason.OUT_OF_RANGE, failure(volume.unmap(SIZE - 512, 1024)).reason());
        write(0, pattern(8192, 5));
        cluster.script.add(Status.BAD_REQUEST);
        assertEquals(Reason.IO_ERROR, failure(volume.unmap(0, 8192)).reason(), "a refused trim is an error, not silence");
    }

    private void write0() {
        try {
            write(0, pattern(4096, 11));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** Sends every request to {@code to}; a test overrides what it watches or changes. */
    private static class ForwardingTransport implements StorageTransport {
        private final StorageTransport to;

        ForwardingTransport(StorageTransport to) {
            this.to = to;
        }

        @Override
        public CompletableFuture<StorageResponse> write(NodeAddress node, ChainAddress chain, ChunkId chunk,
                                                        long offset, ByteBuf data) {
            return to.write(node, chain, chunk, offset, data);
        }

        @Override
        public CompletableFuture<StorageResponse> read(NodeAddress node, ChainAddress chain, ChunkId chunk,
                                                       long offset, int length) {
            return to.read(node, chain, chunk, offset, length);
        }

        @Override
        public CompletableFuture<StorageResponse> trim(NodeAddress node, ChainAddress chain, ChunkId chunk,
                                                       long offset, int length) {
            return to.trim(node, chain, chunk, offset, length);
        }

        @Override
        public CompletableFuture<StorageResponse> extents(NodeAddress node, ChainAddress chain, ChunkId chunk,
                                                          long offset, int length) {
            return to.extents(node, chain, chunk, offset, length);
        }
    }
}
