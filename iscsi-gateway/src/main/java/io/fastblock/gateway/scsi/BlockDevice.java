package io.fastblock.gateway.scsi;

import io.netty.buffer.ByteBuf;
import java.util.concurrent.CompletableFuture;

/**
 * The logical unit's backing store as the SCSI layer sees it. Offsets and lengths are in bytes
 * and block-aligned by the caller. Futures may complete on any thread; failures complete
 * exceptionally with a {@link DeviceException}.
 */
public interface BlockDevice extends AutoCloseable {
    /** Capacity in bytes, a multiple of {@link #blockSize()}. */
    long sizeBytes();

    int blockSize();

    /** Cluster-unique volume number; with {@link #name()} it makes the stable VPD identifiers. */
    long volumeId();

    String name();

    /**
     * Reads {@code length} bytes at {@code offset}. Never-written ranges read as zeros. The
     * returned buffer belongs to the caller.
     */
    CompletableFuture<ByteBuf> read(long offset, int length);

    /**
     * Writes {@code data} (all its readable bytes) at {@code offset}; completes when the write is
     * durable on the replication chain. The device retains {@code data} if it needs it after
     * returning; the caller releases its own reference when the future completes.
     */
    CompletableFuture<Void> write(long offset, ByteBuf data);

    /** Barrier for every write completed before it. Writes are durable when acknowledged. */
    CompletableFuture<Void> flush();

    /** Releases resources held for this open volume (not the volume itself). */
    @Override
    void close();
}
