package io.fastblock.storage.chain;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.ChunkListRequest;
import io.fastblock.protocol.ChunkListing;
import io.fastblock.protocol.Extents;
import io.fastblock.protocol.Status;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.client.BlockingStorageClient;
import io.fastblock.protocol.client.ExtentsAndData;
import io.fastblock.protocol.client.StorageStatusException;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.ZkPaths;
import io.fastblock.storage.StorageServer;
import io.fastblock.storage.StorageServerConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * TRIM and EXTENTS through a chain of three real storage servers (real ZooKeeper, sockets, files,
 * RocksDB), in both tail layouts: allocation agrees on every replica, trimmed ranges read as zeros,
 * space comes back, a whole-chunk trim removes the chunk.
 */
class TrimExtentsChainTest {
    private static final int GROUP = 1;
    private static final ChainAddress CHAIN = new ChainAddress(GROUP, 1, 1);
    private static final int K = 1024;

    @TempDir
    Path dir;
    TestingServer zkServer;
    CuratorFramework zk;
    final List<StorageServer> servers = new ArrayList<>();
    final List<BlockingStorageClient> clients = new ArrayList<>();

    void start(TailLayout layout) throws Exception {
        zkServer = new TestingServer(true);
        zk = CuratorFrameworkFactory.newClient(zkServer.getConnectString(), new RetryOneTime(100));
        zk.start();
        zk.create().creatingParentsIfNeeded().forPath(ZkPaths.group(GROUP),
                MetaJson.write(new GroupRecord(GROUP, 1, List.of("a", "b", "c"))));
        for (String id : List.of("a", "b", "c")) {
            StorageServer s = StorageServer.start(new StorageServerConfig(id, dir.resolve(id), "127.0.0.1", 0,
                    zkServer.getConnectString(), 1 << 20, new ChainLimits(1024, 64L << 20, 10_000, 100, 1 << 20), layout));
            servers.add(s);
            clients.add(new BlockingStorageClient("127.0.0.1", s.port(), Duration.ofSeconds(30)));
        }
    }

    @AfterEach
    void stop() throws Exception {
        clients.forEach(BlockingStorageClient::close);
        servers.forEach(StorageServer::close);
        if (zk != null) {
            zk.close();
        }
        if (zkServer != null) {
            zkServer.close();
        }
    }

    private BlockingStorageClient head() {
        return clients.get(0);
    }

    private static byte[] pattern(int length, long seed) {
        byte[] b = new byte[length];
        new Random(seed).nextBytes(b);
        return b;
    }

    private void assertExtentsEverywhere(ChunkId chunk, long offset, int length, Extents expected) throws Exception {
        for (int i = 0; i < clients.size(); i++) {
            assertEquals(expected, clients.get(i).extents(CHAIN, chunk, offset, length), "extents on " + servers.get(i).nodeId());
        }
    }

    private void assertReadEverywhere(ChunkId chunk, long offset, byte[] expected) throws Exception {
        for (int i = 0; i < clients.size(); i++) {
            assertArrayEquals(expected, clients.get(i).read(CHAIN, chunk, offset, expected.length),
                    "bytes at " + offset + " on " + servers.get(i).nodeId());
        }
    }

    @ParameterizedTest
    @EnumSource(TailLayout.class)
    void trimsGiveBackRangesOnEveryReplica(TailLayout layout) throws Exception {
        start(layout);
        ChunkId chunk = new ChunkId(5, 0);
        byte[] data = pattern(64 * K, 1);
        head().write(CHAIN, chunk, 0, data);
        head().write(CHAIN, chunk, 128 * K, new byte[4 * K]); // a written zero block is allocated
        head().write(CHAIN, chunk, 200_000, new byte[] {7}); // one byte allocates its whole block
        head().write(CHAIN, chunk, 512 * K, pattern(64 * K, 2));
        assertExtentsEverywhere(chunk, 0, 1 << 20, new Extents.Builder().add(0, 64 * K).add(128 * K, 4 * K)
                .add(196_608, 4 * K).add(512 * K, 64 * K).build());
        // clipped to the request
        assertExtentsEverywhere(chunk, 10, 100, new Extents.Builder().add(10, 100).build());

        head().trim(CHAIN, chunk, 16 * K, 16 * K);
        Extents afterTrim = new Extents.Builder().add(0, 16 * K).add(32 * K, 32 * K).add(128 * K, 4 * K)
                .add(196_608, 4 * K).add(512 * K, 64 * K).build();
        assertExtentsEverywhere(chunk, 0, 1 << 20, afterTrim);
        byte[] expected = data.clone();
        Arrays.fill(expected, 16 * K, 32 * K, (byte) 0);
        assertReadEverywhere(chunk, 0, expected);
        for (BlockingStorageClient c : clients) {
            ExtentsAndData both = c.readWithExtents(CHAIN, chunk, 0, 64 * K);
            assertEquals(new Extents.Builder().add(0, 16 * K).add(32 * K, 32 * K).build(), both.extents());
            assertArrayEquals(expected, both.data());
        }

        // The chunk's end: head and middle (and an in-place tail) cut their files.
        long before = servers.get(0).chunkStore().sizeOf(chunk);
        assertEquals(576 * K, before);
        head().trim(CHAIN, chunk, 192 * K, (1 << 20) - 192 * K);
        assertExtentsEverywhere(chunk, 0, 1 << 20, new Extents.Builder().add(0, 16 * K).add(32 * K, 32 * K)
                .add(128 * K, 4 * K).build());
        assertReadEverywhere(chunk, 512 * K, new byte[64 * K]);
        for (StorageServer s : servers.subList(0, layout == TailLayout.LOG ? 2 : 3)) {
            assertEquals(192 * K, s.chunkStore().sizeOf(chunk), "chunk file cut on " + s.nodeId());
        }
        assertEquals(2, servers.get(0).metrics().trims.count());

        // Writing again allocates again.
        head().write(CHAIN, chunk, 16 * K, new byte[4 * K]);
        assertExtentsEverywhere(chunk, 0, 64 * K, new Extents.Builder().add(0, 20 * K).add(32 * K, 32 * K).build());
    }

    @ParameterizedTest
    @EnumSource(TailLayout.class)
    void aWholeChunkTrimRemovesTheChunk(TailLayout layout) throws Exception {
        start(layout);
        ChunkId keep = new ChunkId(6, 0);
        ChunkId gone = new ChunkId(6, 1);
        head().write(CHAIN, keep, 0, pattern(8 * K, 3));
        for (int i = 0; i < 4; i++) {
            head().write(CHAIN, gone, (long) i * 256 * K, pattern(256 * K, 4 + i));
        }
        double liveBefore = servers.get(2).logStore().liveBytes().total();
        assertTrue(listedByTail().contains(gone));

        head().trim(CHAIN, gone, 0, 1 << 30);
        assertExtentsEverywhere(gone, 0, 1 << 20, Extents.NONE);
        assertReadEverywhere(gone, 0, new byte[64 * K]);
        for (StorageServer s : servers) {
            Path file = s.chunkStore().fileOf(gone);
            assertFalse(Files.exists(file), "chunk file removed on " + s.nodeId());
            assertFalse(Files.exists(file.resolveSibling(file.getFileName() + ".crc")));
            assertFalse(Files.exists(file.resolveSibling(file.getFileName() + ".map")));
        }
        assertFalse(listedByTail().contains(gone), "the chunk left the group's list");
        assertTrue(listedByTail().contains(keep));
        double liveAfter = servers.get(2).logStore().liveBytes().total();
        assertEquals(liveBefore - (1 << 20), liveAfter, "the log's live bytes dropped by the trimmed chunk");
        assertExtentsEverywhere(keep, 0, 1 << 20, new Extents.Builder().add(0, 8 * K).build());
    }

    @ParameterizedTest
    @EnumSource(TailLayout.class)
    void unalignedTrimsAreRefusedAndNothingChanges(TailLayout layout) throws Exception {
        start(layout);
        ChunkId chunk = new ChunkId(7, 0);
        byte[] data = pattern(16 * K, 9);
        head().write(CHAIN, chunk, 0, data);
        StorageStatusException e = org.junit.jupiter.api.Assertions.assertThrows(StorageStatusException.class,
                () -> head().trim(CHAIN, chunk, 100, 4 * K));
        assertEquals(Status.BAD_REQUEST, e.status());
        assertTrue(e.getMessage().contains("multiples of 4096"), e.getMessage());
        e = org.junit.jupiter.api.Assertions.assertThrows(StorageStatusException.class,
                () -> head().trim(CHAIN, chunk, 0, 5000));
        assertEquals(Status.BAD_REQUEST, e.status());
        e = org.junit.jupiter.api.Assertions.assertThrows(StorageStatusException.class,
                () -> clients.get(1).trim(CHAIN, chunk, 0, 4 * K));
        assertEquals(Status.BAD_REQUEST, e.status(), "trims enter the chain at the head, like writes");
        assertReadEverywhere(chunk, 0, data);
        assertExtentsEverywhere(chunk, 0, 64 * K, new Extents.Builder().add(0, 16 * K).build());
        e = org.junit.jupiter.api.Assertions.assertThrows(StorageStatusException.class,
                () -> clients.get(2).readWithExtents(CHAIN, chunk, 0, io.fastblock.protocol.ReadRequest.MAX_LENGTH_WITH_EXTENTS + 1));
        assertEquals(Status.BAD_REQUEST, e.status());
        assertTrue(e.getMessage().contains("read with extents"), e.getMessage());
    }

    /** The largest read with extents, of blocks allocated one in two (the longest list), fits one answer. */
    @ParameterizedTest
    @EnumSource(TailLayout.class)
    void theLongestReadWithExtentsFitsOneFrame(TailLayout layout) throws Exception {
        start(layout);
        ChunkId chunk = new ChunkId(8, 0);
        int length = io.fastblock.protocol.ReadRequest.MAX_LENGTH_WITH_EXTENTS;
        byte[] data = pattern(length, 11);
        head().write(CHAIN, chunk, 0, data);
        Extents.Builder want = new Extents.Builder();
        for (int off = 0; off + 8 * K <= length; off += 8 * K) {
            head().trim(CHAIN, chunk, off + 4 * K, 4 * K);
            Arrays.fill(data, off + 4 * K, off + 8 * K, (byte) 0);
            want.add(off, 4 * K);
        }
        if (length % (8 * K) != 0) {
            want.add(length - length % (8 * K), Math.min(4 * K, length % (8 * K)));
        }
        for (BlockingStorageClient c : clients) {
            ExtentsAndData both = c.readWithExtents(CHAIN, chunk, 0, length);
            assertEquals(want.build(), both.extents());
            assertArrayEquals(data, both.data());
        }
    }

    private List<ChunkId> listedByTail() throws Exception {
        StorageResponse r = clients.get(2).call(id -> new ChunkListRequest(id, CHAIN));
        assertEquals(Status.OK, r.status(), r.message());
        return ChunkListing.decode(r.data()).entries().stream().map(ChunkListing.Entry::chunk).toList();
    }
}
