package io.fastblock.storage.chain;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.ReadRequest;
import io.fastblock.protocol.Status;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.WriteRequest;
import io.fastblock.protocol.meta.GroupRecord;
import io.fastblock.storage.StorageMetrics;
import io.fastblock.storage.chunk.ChunkStore;
import io.fastblock.storage.log.LogStore;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The replica logic without sockets: groups from an in-memory table, real stores on disk. */
class ReplicaServiceTest {
    @TempDir
    Path dir;
    private final Map<Integer, GroupRecord> table = new ConcurrentHashMap<>();
    private ChunkStore chunks;
    private LogStore log;
    private ReplicaService service;
    private GroupChunks registry;

    private final GroupLookup groups = new GroupLookup() {
        @Override
        public GroupRecord cached(int groupId) {
            return null; // always take the refresh path
        }

        @Override
        public CompletableFuture<GroupRecord> refresh(int groupId) {
            return CompletableFuture.completedFuture(table.get(groupId));
        }
    };

    private final Downstream noSuccessor = new Downstream() {
        @Override
        public CompletableFuture<Void> prepare(String nodeId) {
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public CompletableFuture<StorageResponse> forward(String nodeId, WriteRequest write) {
            write.data().release();
            return CompletableFuture.completedFuture(StorageResponse.error(write.requestId(), write.op(), Status.IO_ERROR,
                    "node " + nodeId + ": unreachable in this test"));
        }
    };

    @BeforeEach
    void open() throws Exception {
        StorageMetrics metrics = new StorageMetrics();
        chunks = new ChunkStore(dir, 2);
        log = LogStore.open(dir, 1 << 20, metrics, new io.fastblock.storage.log.ChunkStoreBase(chunks), 0);
        registry = new GroupChunks(dir);
        service = new ReplicaService("me", groups, noSuccessor, new ReplicaStorage(chunks, log, Runnable::run, TailLayout.LOG), registry,
                metrics, new ChainMetrics(metrics.registry()), new ChainLimits(16, 1 << 20, 2_000, 50, 4096), Runnable::run);
        table.put(1, new GroupRecord(1, 3, List.of("me")));
        table.put(2, new GroupRecord(2, 1, List.of("x", "y", "z")));
        table.put(3, new GroupRecord(3, 1, List.of("me", "other")));
    }

    @AfterEach
    void close() throws Exception {
        service.close();
        registry.close();
        log.close();
        chunks.close();
    }

    private StorageResponse call(io.fastblock.protocol.StorageMessage m) throws Exception {
        return service.handle(m, PooledByteBufAllocator.DEFAULT).get(10, TimeUnit.SECONDS);
    }

    private static WriteRequest write(ChainAddress chain, long offset, byte[] data) {
        return new WriteRequest(1, 0, chain, new ChunkId(9, 0), offset, 0, Unpooled.wrappedBuffer(data));
    }

    @Test
    void singleMemberGroupIsHeadAndTailAndWritesToTheLog() throws Exception {
        ChainAddress chain = new ChainAddress(1, 3, 1);
        assertEquals(Status.OK, call(write(chain, 100, new byte[]{4, 5, 6})).status());
        StorageResponse r = call(new ReadRequest(2, chain, new ChunkId(9, 0), 99, 5));
        try {
            assertEquals(Status.OK, r.status(), r.message());
            byte[] got = new byte[5];
            r.data().getBytes(0, got);
            assertArrayEquals(new byte[]{0, 4, 5, 6, 0}, got);
        } finally {
            r.data().release();
        }
    }

    @Test
    void membershipAndVersionErrors() throws Exception {
        StorageResponse unknown = call(write(new ChainAddress(77, 1, 1), 0, new byte[]{1}));
        assertEquals(Status.UNKNOWN_GROUP, unknown.status());
        assertTrue(unknown.message().contains("group 77"), unknown.message());
        StorageResponse notMember = call(write(new ChainAddress(2, 1, 1), 0, new byte[]{1}));
        assertEquals(Status.NOT_MEMBER, notMember.status());
        StorageResponse stale = call(new ReadRequest(3, new ChainAddress(1, 2, 1), new ChunkId(9, 0), 0, 1));
        assertEquals(Status.STALE_CHAIN, stale.status());
        assertTrue(stale.message().contains("chain version 3, request has 2"), stale.message());
    }

    @Test
    void olderLeaseEpochIsFenced() throws Exception {
        assertEquals(Status.OK, call(write(new ChainAddress(1, 3, 5), 0, new byte[]{1})).status());
        StorageResponse old = call(write(new ChainAddress(1, 3, 4), 0, new byte[]{2}));
        assertEquals(Status.STALE_EPOCH, old.status());
        assertTrue(old.message().contains("older than 5"), old.message());
        assertEquals(Status.OK, call(write(new ChainAddress(1, 3, 6), 0, new byte[]{3})).status());
    }

    @Test
    void negativeAndOversizedRangesAreBadRequests() throws Exception {
        ChainAddress chain = new ChainAddress(1, 3, 1);
        StorageResponse negOffset = call(new ReadRequest(1, chain, new ChunkId(9, 0), -1, 10));
        assertEquals(Status.BAD_REQUEST, negOffset.status());
        assertTrue(negOffset.message().contains("negative offset"), negOffset.message());
        StorageResponse negLength = call(new ReadRequest(1, chain, new ChunkId(9, 0), 0, -10));
        assertEquals(Status.BAD_REQUEST, negLength.status());
        assertTrue(negLength.message().contains("negative length"), negLength.message());
        assertEquals(Status.BAD_REQUEST, call(write(chain, -4, new byte[]{1})).status());
    }

    @Test
    void downstreamErrorIsReturnedWithItsStatusAndMessage() throws Exception {
        StorageResponse r = call(write(new ChainAddress(3, 1, 1), 0, new byte[]{1, 2}));
        assertEquals(Status.IO_ERROR, r.status());
        assertTrue(r.message().contains("node other"), r.message());
    }
}
