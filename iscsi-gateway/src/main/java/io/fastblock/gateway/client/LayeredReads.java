package io.fastblock.gateway.client;

import io.fastblock.gateway.scsi.DeviceException;
import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.Extents;
import io.fastblock.protocol.StorageResponse;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;

/**
 * Reads of a volume with lower layers (docs/snapshots.md): a block comes from the topmost layer
 * that has it allocated, zeros where none has. Per layer, from the top down, and only while some
 * bytes are still unresolved: the chunk's route in that layer's map (no route: the layer holds
 * nothing there), then EXTENTS and a READ of the range from a member of its chain, and the
 * allocated part of the unresolved bytes is copied in.
 *
 * <p>EXTENTS comes before READ: a block allocated when EXTENTS answered stays allocated (only a
 * trim, i.e. a concurrent UNMAP, could change that), so its READ bytes are the layer's; a block
 * written between the two is taken from below, i.e. the read returns the data from before that
 * concurrent write, which SCSI allows. Lower layers are sealed and never change.
 *
 * <p>Every storage request walks the chain's members (head, middle, tail) until one answers; when
 * none does, the route is dropped from the layer's cache and asked for again, up to the client's
 * attempt limit.
 */
final class LayeredReads {
    private final StorageTransport storage;
    private final ByteBufAllocator alloc;
    private final ClientSettings settings;
    private final LongSupplier epoch;

    LayeredReads(StorageTransport storage, ByteBufAllocator alloc, ClientSettings settings, LongSupplier epoch) {
        this.storage = storage;
        this.alloc = alloc;
        this.settings = settings;
        this.epoch = epoch;
    }

    /** The bytes {@code [offsetInChunk, +length)} of chunk {@code index} as {@code stack} resolves them. */
    CompletableFuture<ByteBuf> read(LayerStack stack, long index, long offsetInChunk, int length) {
        ByteBuf out = alloc.directBuffer(length, length).writeZero(length);
        List<long[]> holes = new ArrayList<>();
        holes.add(new long[] {offsetInChunk, offsetInChunk + length});
        return fill(stack.topDown(), 0, stack, index, offsetInChunk, length, holes, out).handle((v, err) -> {
            if (err != null) {
                out.release();
                throw new java.util.concurrent.CompletionException(Failures.toDeviceException(err));
            }
            return out;
        });
    }

    private CompletableFuture<Void> fill(List<Long> layers, int at, LayerStack stack, long index, long offset,
                                         int length, List<long[]> holes, ByteBuf out) {
        if (at >= layers.size() || holes.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        long layer = layers.get(at);
        return readLayer(stack.map(layer), layer, index, offset, length, 0).thenCompose(found -> {
            if (found.isPresent()) {
                try {
                    copyAllocated(found.get(), offset, holes, out);
                } finally {
                    found.get().data().release();
                }
            }
            return fill(layers, at + 1, stack, index, offset, length, holes, out);
        });
    }

    /** What one layer holds of the range: its extents and bytes, or empty when the chunk is not in its map. */
    private record LayerData(Extents extents, ByteBuf data) {
    }

    private CompletableFuture<Optional<LayerData>> readLayer(ChunkMapCache map, long layer, long index, long offset,
                                                             int length, int attempt) {
        return map.lookup(index).thenCompose(found -> {
            if (found.isEmpty()) {
                return CompletableFuture.completedFuture(Optional.<LayerData>empty());
            }
            ChunkRoute route = found.get();
            ChunkId chunk = new ChunkId(layer, index);
            ChainAddress chain = new ChainAddress(route.groupId(), route.chainVersion(), epoch.getAsLong());
            return fromMembers(route, 0, m -> storage.extents(m, chain, chunk, offset, length))
                    .thenCompose(extentsResp -> {
                        Extents extents;
                        try {
                            extents = Extents.decode(extentsResp.data());
                        } finally {
                            extentsResp.data().release();
                        }
                        if (extents.isEmpty()) {
                            return CompletableFuture.completedFuture(Optional.<LayerData>empty());
                        }
                        return fromMembers(route, 0, m -> storage.read(m, chain, chunk, offset, length))
                                .thenApply(r -> {
                                    if (r.data().readableBytes() != length) {
                                        int got = r.data().readableBytes();
                                        r.data().release();
                                        throw new DeviceException(DeviceException.Reason.IO_ERROR, "read of " + chunk
                                                + " returned " + got + " bytes instead of " + length);
                                    }
                                    return Optional.of(new LayerData(extents, r.data()));
                                });
                    })
                    .exceptionallyCompose(err -> {
                        if (attempt + 1 >= settings.maxAttempts()) {
                            return CompletableFuture.failedFuture(err);
                        }
                        map.invalidate(index, route); // every member failed: the chain may have changed
                        return CompletableFuture.supplyAsync(() -> null,
                                CompletableFuture.delayedExecutor(settings.retryBackoff().toMillis(),
                                        java.util.concurrent.TimeUnit.MILLISECONDS))
                                .thenCompose(x -> readLayer(map, layer, index, offset, length, attempt + 1));
                    });
        });
    }

    /** Sends to the route's members in turn until one answers OK. */
    private CompletableFuture<StorageResponse> fromMembers(ChunkRoute route, int member,
                                                           java.util.function.Function<NodeAddress,
                                                                   CompletableFuture<StorageResponse>> send) {
        if (member >= route.members().size()) {
            return CompletableFuture.failedFuture(new DeviceException(DeviceException.Reason.IO_ERROR,
                    "no member of group " + route.groupId() + " answered"));
        }
        NodeAddress node = route.members().get(member).address();
        return send.apply(node).handle((resp, err) -> {
            if (err == null && resp.isOk()) {
                return CompletableFuture.completedFuture(resp);
            }
            if (err == null) {
                resp.data().release();
            }
            return fromMembers(route, member + 1, send);
        }).thenCompose(f -> f);
    }

    /** Copies the bytes of {@code d} that are allocated and still unresolved into {@code out}; shrinks {@code holes}. */
    private static void copyAllocated(LayerData d, long base, List<long[]> holes, ByteBuf out) {
        List<long[]> left = new ArrayList<>();
        for (long[] h : holes) {
            long pos = h[0];
            for (Extents.Range r : d.extents().ranges()) {
                long a = Math.max(h[0], r.offset());
                long b = Math.min(h[1], r.end());
                if (b <= a) {
                    continue;
                }
                if (a > pos) {
                    left.add(new long[] {pos, a});
                }
                out.setBytes((int) (a - base), d.data(), d.data().readerIndex() + (int) (a - base), (int) (b - a));
                pos = b;
            }
            if (pos < h[1]) {
                left.add(new long[] {pos, h[1]});
            }
        }
        holes.clear();
        holes.addAll(left);
    }
}
