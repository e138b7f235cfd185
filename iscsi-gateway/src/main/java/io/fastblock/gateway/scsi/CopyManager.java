package io.fastblock.gateway.scsi;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The LU's copy manager: EXTENDED COPY (LID1) within the LU, segment by segment (each a device
 * read then a write under the destination's range lock), and RECEIVE COPY RESULTS (COPY STATUS,
 * OPERATING PARAMETERS). Copies run to completion inside their command, so a held status is always
 * "completed"; it is kept per I_T nexus and list identifier (SPC-4 6.4.1) until it is reported.
 */
final class CopyManager {
    static final int STATUS_COMPLETED_GOOD = 0x01;
    static final int STATUS_COMPLETED_ERROR = 0x02;

    /** What RECEIVE COPY RESULTS / COPY STATUS reports for one finished copy. */
    record Status(int managerStatus, int segmentsProcessed, long bytesCopied) {
    }

    interface RangeLock {
        <T> CompletableFuture<T> locked(long lba, long count, Supplier<CompletableFuture<T>> io);
    }

    private final BlockDevice device;
    private final int blockSize;
    private final RangeLock locks;
    private final Map<ScsiNexus, Map<Integer, Status>> held = new ConcurrentHashMap<>();

    CopyManager(BlockDevice device, RangeLock locks) {
        this.device = device;
        this.blockSize = device.blockSize();
        this.locks = locks;
    }

    /** EXTENDED COPY(LID1): {@code listLength} 0 is no copy at all (SPC-4: not an error). */
    CompletableFuture<ScsiResult> extendedCopy(ByteBuf cdb, ByteBuf list, ScsiNexus nexus, long blocks,
                                               List<byte[]> designators) {
        if ((cdb.getByte(1) & 0x1f) != 0) {
            return done(ScsiResult.check(Sense.invalidCdbField(1))); // LID4 is not implemented
        }
        long listLength = cdb.getUnsignedInt(10);
        if (listLength == 0) {
            return done(ScsiResult.good());
        }
        ExtendedCopy.Parsed p = ExtendedCopy.parse(list, listLength, blocks, blockSize, designators);
        if (p.error() != null) {
            return done(ScsiResult.check(p.error()));
        }
        ExtendedCopy.Plan plan = p.plan();
        List<ExtendedCopy.Segment> segs = plan.segments();
        // Segments run one after another; the counters are only touched by the completing stage.
        int[] processed = {0};
        long[] copied = {0};
        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
        for (ExtendedCopy.Segment s : segs) {
            chain = chain.thenCompose(v -> copySegment(s)).thenRun(() -> {
                processed[0]++;
                copied[0] += s.blocks() * blockSize;
            });
        }
        return chain.handle((v, err) -> {
            if (plan.holdsStatus()) {
                held.computeIfAbsent(nexus, k -> new ConcurrentHashMap<>()).put(plan.listId(), new Status(
                        err == null ? STATUS_COMPLETED_GOOD : STATUS_COMPLETED_ERROR, processed[0], copied[0]));
            }
            if (err == null) {
                return ScsiResult.good();
            }
            // The copy target's failure, reported as a copy manager does: COPY ABORTED, failed segment.
            return ScsiResult.check(Sense.COPY_ABORTED_NO_DETAIL.withCommandSpecific(processed[0]));
        });
    }

    private CompletableFuture<Void> copySegment(ExtendedCopy.Segment s) {
        if (s.blocks() == 0) {
            return CompletableFuture.completedFuture(null);
        }
        int len = (int) (s.blocks() * blockSize);
        CompletableFuture<ByteBuf> read;
        try {
            read = device.read(s.srcLba() * blockSize, len);
        } catch (RuntimeException e) {
            read = CompletableFuture.failedFuture(e);
        }
        return read.thenCompose(data -> locks.<Void>locked(s.dstLba(), s.blocks(), () -> {
            try {
                return device.write(s.dstLba() * blockSize, data);
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(e);
            }
        }).whenComplete((v, e) -> data.release()));
    }

    /** RECEIVE COPY RESULTS (SPC-4 6.18, LID1 service actions). */
    ScsiResult receiveCopyResults(ByteBuf cdb, ScsiNexus nexus, ByteBufAllocator alloc) {
        int sa = cdb.getByte(1) & 0x1f;
        int listId = cdb.getUnsignedByte(2);
        long allocLen = cdb.getUnsignedInt(10);
        ByteBuf out;
        switch (sa) {
            case 0x00 -> { // COPY STATUS
                Map<Integer, Status> mine = held.get(nexus);
                Status s = mine == null ? null : mine.remove(listId); // reported once, then discarded
                if (s == null) {
                    return ScsiResult.check(Sense.invalidCdbField(2)); // no copy with that list identifier
                }
                out = alloc.buffer(12);
                out.writeInt(8);
                out.writeByte(s.managerStatus());
                out.writeShort(s.segmentsProcessed());
                out.writeByte(0x00); // TRANSFER COUNT UNITS: bytes
                out.writeInt((int) Math.min(s.bytesCopied(), 0xffffffffL));
            }
            case 0x03 -> { // OPERATING PARAMETERS
                out = alloc.buffer(46);
                out.writeInt(0);
                out.writeByte(0x01); // SNLID: list identifiers need not be unique when not held
                out.writeZero(3);
                out.writeShort(ExtendedCopy.MAX_TARGET_DESCRIPTORS);
                out.writeShort(ExtendedCopy.MAX_SEGMENT_DESCRIPTORS);
                out.writeInt(ExtendedCopy.MAX_DESCRIPTOR_LIST_LENGTH);
                out.writeInt(ExtendedCopy.MAX_SEGMENT_BYTES);
                out.writeInt(0); // MAXIMUM INLINE DATA LENGTH
                out.writeInt(0); // HELD DATA LIMIT: no data is held, only status
                out.writeInt(0); // MAXIMUM STREAM DEVICE TRANSFER SIZE
                out.writeShort(0);
                out.writeShort(1); // TOTAL CONCURRENT COPIES: each copy runs inside its command
                out.writeByte(1); // MAXIMUM CONCURRENT COPIES
                out.writeByte(Integer.numberOfTrailingZeros(blockSize)); // DATA SEGMENT GRANULARITY (log2)
                out.writeByte(0);
                out.writeByte(0);
                out.writeZero(3);
                out.writeByte(2); // IMPLEMENTED DESCRIPTOR LIST LENGTH
                out.writeByte(ExtendedCopy.BLOCK_TO_BLOCK);
                out.writeByte(ExtendedCopy.IDENTIFICATION_TARGET);
                out.setInt(0, out.readableBytes() - 4);
            }
            default -> {
                return ScsiResult.check(Sense.invalidCdbField(1)); // RECEIVE DATA / FAILED SEGMENT DETAILS: not implemented
            }
        }
        if (out.readableBytes() > allocLen) {
            out.writerIndex((int) allocLen);
        }
        return ScsiResult.good(out);
    }

    /** The nexus is gone: its held results go with it. */
    void nexusLost(ScsiNexus nexus) {
        held.remove(nexus);
    }

    private static CompletableFuture<ScsiResult> done(ScsiResult r) {
        return CompletableFuture.completedFuture(r);
    }
}
