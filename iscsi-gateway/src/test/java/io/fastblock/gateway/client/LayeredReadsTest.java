package io.fastblock.gateway.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.Extents;
import io.fastblock.protocol.OpCode;
import io.fastblock.protocol.Status;
import io.fastblock.protocol.StorageResponse;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.time.Duration;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Reads through a layer stack against storage keyed by (layer, chunk) with exact 4 KiB allocation:
 * the topmost layer holding a block wins, holes fall through, zeros where no layer has data, a
 * layer whose map lacks the chunk is never asked, and a member that fails is skipped.
 */
class LayeredReadsTest {
    private static final int CHUNK = 64 * 1024;
    private static final GroupInfo GROUP = new GroupInfo(1, 1, List.of(new GroupMember("s1", "127.0.0.1", 1, true),
            new GroupMember("s2", "127.0.0.1", 2, true)));

    /** Storage: bytes and allocated 4 KiB blocks per (layer, chunk); member 1 can be made to fail. */
    private static final class LayerStorage implements StorageTransport {
        final Map<ChunkId, byte[]> bytes = new ConcurrentHashMap<>();
        final Map<ChunkId, BitSet> allocated = new ConcurrentHashMap<>();
        final AtomicInteger requests = new AtomicInteger();
        volatile boolean firstMemberDown;

        void put(long layer, long chunk, int offset, byte[] data) {
            ChunkId id = new ChunkId(layer, chunk);
            System.arraycopy(data, 0, bytes.computeIfAbsent(id, k -> new byte[CHUNK]), offset, data.length);
            allocated.computeIfAbsent(id, k -> new BitSet()).set(offset / 4096, (offset + data.length + 4095) / 4096);
        }

        private CompletableFuture<StorageResponse> answer(NodeAddress node, OpCode op, ByteBuf data) {
            requests.incrementAndGet();
            if (firstMemberDown && node.port() == 1) {
                data.release();
                return CompletableFuture.completedFuture(StorageResponse.error(0, op, Status.IO_ERROR, "down"));
            }
            return CompletableFuture.completedFuture(StorageResponse.ok(0, op, data));
        }

        @Override
        public CompletableFuture<StorageResponse> read(NodeAddress node, ChainAddress chain, ChunkId chunk, long offset,
                                                       int length) {
            byte[] b = bytes.getOrDefault(chunk, new byte[CHUNK]);
            return answer(node, OpCode.READ, Unpooled.copiedBuffer(b, (int) offset, length));
        }

        @Override
        public CompletableFuture<StorageResponse> extents(NodeAddress node, ChainAddress chain, ChunkId chunk,
                                                          long offset, int length) {
            BitSet a = allocated.getOrDefault(chunk, new BitSet());
            Extents.Builder e = new Extents.Builder();
            for (int blk = (int) (offset / 4096); blk * 4096L < offset + length; blk++) {
                if (a.get(blk)) {
                    long from = Math.max(offset, blk * 4096L);
                    long to = Math.min(offset + length, (blk + 1) * 4096L);
                    e.add(from, to - from);
                }
            }
            ByteBuf out = Unpooled.buffer();
            e.build().encode(out);
            return answer(node, OpCode.EXTENTS, out);
        }

        @Override
        public CompletableFuture<StorageResponse> write(NodeAddress node, ChainAddress chain, ChunkId chunk,
                                                        long offset, ByteBuf data) {
            throw new UnsupportedOperationException();
        }

        @Override
        public CompletableFuture<StorageResponse> trim(NodeAddress node, ChainAddress chain, ChunkId chunk,
                                                       long offset, int length) {
            throw new UnsupportedOperationException();
        }
    }

    private static ChunkMapCache map(long... allocatedChunks) {
        return new ChunkMapCache("v", new ChunkMapSource() {
            @Override
            public CompletableFuture<ChunkLocation> lookupChunk(String volumeName, long index) {
                boolean a = Arrays.stream(allocatedChunks).anyMatch(c -> c == index);
                return CompletableFuture.completedFuture(new ChunkLocation(index, a, a ? GROUP : null));
            }

            @Override
            public CompletableFuture<ChunkLocation> allocateChunk(String volumeName, long index) {
                throw new UnsupportedOperationException();
            }
        }, Duration.ofSeconds(5));
    }

    private static byte[] filled(int n, int value) {
        byte[] b = new byte[n];
        Arrays.fill(b, (byte) value);
        return b;
    }

    private static byte[] read(LayeredReads reads, LayerStack stack, long chunk, int offset, int length)
            throws Exception {
        ByteBuf b = reads.read(stack, chunk, offset, length).get(5, TimeUnit.SECONDS);
        try {
            return ByteBufUtil.getBytes(b);
        } finally {
            b.release();
        }
    }

    @Test
    void topmostLayerWinsPerBlockAndHolesFallThroughToZeros() throws Exception {
        LayerStorage storage = new LayerStorage();
        storage.put(1, 0, 0, filled(16384, 0x11));  // bottom: blocks 0-3
        storage.put(2, 0, 4096, filled(4096, 0x22)); // middle: block 1
        storage.put(3, 0, 8192, filled(4096, 0x33)); // top: block 2
        LayerStack stack = new LayerStack(List.of(1L, 2L, 3L), Map.of(1L, map(0), 2L, map(0), 3L, map(0)));
        LayeredReads reads = new LayeredReads(storage, PooledByteBufAllocator.DEFAULT, settings(), () -> 0);

        byte[] got = read(reads, stack, 0, 0, 20480);
        byte[] want = new byte[20480];
        Arrays.fill(want, 0, 4096, (byte) 0x11);
        Arrays.fill(want, 4096, 8192, (byte) 0x22);
        Arrays.fill(want, 8192, 12288, (byte) 0x33);
        Arrays.fill(want, 12288, 16384, (byte) 0x11);
        assertArrayEquals(want, got, "block 4 is in no layer: zeros");

        // An unaligned range inside one block, served by the middle layer.
        assertArrayEquals(filled(100, 0x22), read(reads, stack, 0, 5000, 100));
    }

    @Test
    void aLayerWithoutTheChunkInItsMapIsNotAskedAndAFailedMemberIsSkipped() throws Exception {
        LayerStorage storage = new LayerStorage();
        storage.put(1, 3, 0, filled(4096, 0x44));
        storage.put(2, 3, 0, filled(4096, 0x55)); // in storage, but layer 2's map does not list chunk 3
        LayerStack stack = new LayerStack(List.of(1L, 2L), Map.of(1L, map(3), 2L, map()));
        LayeredReads reads = new LayeredReads(storage, PooledByteBufAllocator.DEFAULT, settings(), () -> 0);
        storage.firstMemberDown = true;
        assertArrayEquals(filled(4096, 0x44), read(reads, stack, 3, 0, 4096));
        // Layer 1 only: EXTENTS and READ each failed at the first member, then answered by the second.
        assertEquals(4, storage.requests.get());
        assertArrayEquals(new byte[4096], read(reads, stack, 5, 0, 4096), "no layer has chunk 5");
    }

    private static ClientSettings settings() {
        return new ClientSettings(Duration.ofSeconds(4), 4, Duration.ofMillis(1), Duration.ofSeconds(9),
                Duration.ofSeconds(30), 8, 128 * 1024, 2, 256 * 1024, 1, 1, Duration.ofSeconds(5));
    }
}
