package io.fastblock.gateway.scsi;

import io.netty.buffer.ByteBuf;
import java.util.List;
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

    /**
     * Aligned window (a power of two, at least a block) within which small writes arriving together
     * and continuing one another may be merged into one {@link #write} ({@link WriteCoalescer});
     * 0, the default, merges nothing. A device returns a size whose windows never cross its own
     * request or placement boundaries.
     */
    default int coalescedWriteBytes() {
        return 0;
    }

    /** Barrier for every write completed before it. Writes are durable when acknowledged. */
    CompletableFuture<Void> flush();

    /**
     * Registers {@code listener}, run when {@link #sizeBytes()} grew (a volume extended while in
     * use); the SCSI layer then raises CAPACITY DATA HAS CHANGED. Devices that never grow ignore it.
     */
    default void onCapacityChange(Runnable listener) {
    }

    /**
     * True when the volume is thin provisioned: {@link #unmap} really returns space and
     * {@link #lbaStatus} tells mapped from deallocated ranges. Only then does the SCSI layer
     * advertise logical block provisioning (LBPME, VPD 0xB2, UNMAP, WRITE SAME with UNMAP).
     */
    default boolean thinProvisioned() {
        return false;
    }

    /**
     * Deallocates {@code length} bytes at {@code offset} (block-aligned); afterwards the range reads
     * as zeros. Completes when the deallocation is durable like a write. Devices that are not thin
     * provisioned fail with {@link DeviceException.Reason#UNSUPPORTED}.
     */
    default CompletableFuture<Void> unmap(long offset, long length) {
        return CompletableFuture.failedFuture(
                new DeviceException(DeviceException.Reason.UNSUPPORTED, "unmap not supported by " + name()));
    }

    /** A run of bytes that is either mapped (holds written data) or deallocated (reads as zeros). */
    record Extent(long offset, long length, boolean mapped) {
    }

    /**
     * Provisioning status from {@code offset} (block-aligned) on, for at most {@code length} bytes:
     * consecutive extents, the first starting at {@code offset}, adjacent extents of the same kind
     * merged. The device may describe less than {@code length} (at least one block). The default,
     * for fully provisioned devices, reports everything as mapped.
     */
    default CompletableFuture<List<Extent>> lbaStatus(long offset, long length) {
        return CompletableFuture.completedFuture(List.of(new Extent(offset, length, true)));
    }

    /**
     * Registers {@code action}, run once when this open device can no longer serve I/O for good
     * (the gateway lost the volume's lease, or the volume was deleted): the iSCSI layer then asks
     * the sessions using it to log out. The default never calls it.
     */
    default void whenLost(Runnable action) {
    }

    /** When data commands may start (per-volume QoS); the default admits everything at once. */
    default IoAdmission admission() {
        return IoAdmission.NONE;
    }

    /** Releases resources held for this open volume (not the volume itself). */
    @Override
    void close();
}
