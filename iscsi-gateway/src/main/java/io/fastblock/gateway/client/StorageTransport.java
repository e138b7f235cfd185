package io.fastblock.gateway.client;

import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.StorageResponse;
import io.netty.buffer.ByteBuf;
import java.util.concurrent.CompletableFuture;

/**
 * Sends data requests to storage nodes. {@link StorageClient} is the network one; tests use an
 * in-memory one. Futures fail with {@link StorageRequestException} when no answer arrives; an
 * answer with a non-OK status completes normally. The caller owns (and releases) the data of
 * every response it receives.
 */
public interface StorageTransport {
    /** Takes ownership of {@code data}: it is released once sent or when the request fails. */
    CompletableFuture<StorageResponse> write(NodeAddress node, ChainAddress chain, ChunkId chunk, long offset,
                                             ByteBuf data);

    /**
     * A write to the chain's head {@code node} whose OK may come straight from its {@code tail}, as
     * chain replication's tail answers its client (two hops sooner than through the head). The
     * default sends it like {@link #write(NodeAddress, ChainAddress, ChunkId, long, ByteBuf)}.
     */
    default CompletableFuture<StorageResponse> write(NodeAddress node, NodeAddress tail, ChainAddress chain, ChunkId chunk,
                                                     long offset, ByteBuf data) {
        return write(node, chain, chunk, offset, data);
    }

    CompletableFuture<StorageResponse> read(NodeAddress node, ChainAddress chain, ChunkId chunk, long offset,
                                            int length);

    /**
     * TRIM (a WRITE with FLAG_TRIM, sent to the head like a write): {@code [offset, offset + length)}
     * of the chunk, 4 KiB aligned, reads as zeros afterwards and its space is given back.
     */
    CompletableFuture<StorageResponse> trim(NodeAddress node, ChainAddress chain, ChunkId chunk, long offset,
                                            int length);

    /**
     * EXTENTS: the allocated 4 KiB blocks of {@code [offset, offset + length)} of the chunk as the
     * receiving member has them; the answer data is an encoded {@link io.fastblock.protocol.Extents}.
     */
    CompletableFuture<StorageResponse> extents(NodeAddress node, ChainAddress chain, ChunkId chunk, long offset,
                                               int length);
}
