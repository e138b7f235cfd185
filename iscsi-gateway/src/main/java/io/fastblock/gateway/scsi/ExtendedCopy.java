package io.fastblock.gateway.scsi;

import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * EXTENDED COPY (LID1) parameter list parsing (SPC-4 6.4): the copy manager of a logical unit
 * copies between blocks of itself only. Target descriptors must be identification descriptors
 * (0xE4) naming this LU by one of its VPD 0x83 designators; segments must be block-to-block
 * (0x02). The result is either a validated plan (segments in LBA units) or the sense that ends
 * the command, checked in the order libiscsi and SPC expect: lengths, then counts, then types,
 * then each descriptor's fields.
 */
final class ExtendedCopy {
    /** RECEIVE COPY RESULTS operating parameters (SPC-4 6.18.4), also the limits enforced here. */
    static final int MAX_TARGET_DESCRIPTORS = 2;
    static final int MAX_SEGMENT_DESCRIPTORS = 16;
    static final int MAX_DESCRIPTOR_LIST_LENGTH = 1024;
    /** Largest segment: BLOCK DEVICE NUMBER OF BLOCKS is 16 bits, bounded here by bytes too. */
    static final int MAX_SEGMENT_BYTES = 8 << 20;
    static final int HEADER = 16;
    static final int TARGET_DESCRIPTOR_LENGTH = 32;
    static final int IDENTIFICATION_TARGET = 0xE4;
    static final int BLOCK_TO_BLOCK = 0x02;
    static final int BLOCK_TO_BLOCK_LENGTH = 0x18;

    /** One block-to-block segment: {@code blocks} blocks from {@code srcLba} to {@code dstLba}. */
    record Segment(long srcLba, long dstLba, long blocks) {
    }

    /** What a parameter list asks for: the list id and how its results are held, and the segments. */
    record Plan(int listId, int listIdUsage, List<Segment> segments) {
        /** LIST ID USAGE 00b and 01b (SPC-4 table 109): the copy manager holds status for RECEIVE COPY RESULTS. */
        boolean holdsStatus() {
            return listIdUsage == 0 || listIdUsage == 1;
        }
    }

    /** Either a plan or the sense ending the command. */
    record Parsed(Plan plan, Sense error) {
        static Parsed fail(Sense s) {
            return new Parsed(null, s);
        }
    }

    private ExtendedCopy() {
    }

    /**
     * Parses {@code list} ({@code listLength} bytes announced by the CDB) for a LU of
     * {@code blocks} blocks of {@code blockSize} bytes whose VPD 0x83 designators are
     * {@code designators} (each the 4-byte designation descriptor header + designator).
     */
    static Parsed parse(ByteBuf list, long listLength, long blocks, int blockSize, List<byte[]> designators) {
        if (listLength < HEADER || list == null || list.readableBytes() < listLength) {
            return Parsed.fail(Sense.PARAMETER_LIST_LENGTH_ERROR);
        }
        int r = list.readerIndex();
        int listId = list.getUnsignedByte(r);
        int flags = list.getUnsignedByte(r + 1);
        int usage = (flags >> 3) & 3;
        if ((flags & 0x20) != 0) {
            return Parsed.fail(Sense.invalidParameterField(1)); // STR: no stream devices here
        }
        if (usage == 3 && listId != 0) {
            return Parsed.fail(Sense.invalidParameterField(0)); // LIST ID USAGE 11b needs LIST IDENTIFIER 0
        }
        int targetLen = list.getUnsignedShort(r + 2);
        long segmentLen = list.getUnsignedInt(r + 8);
        long inlineLen = list.getUnsignedInt(r + 12);
        if (HEADER + targetLen + segmentLen + inlineLen > listLength) {
            return Parsed.fail(Sense.PARAMETER_LIST_LENGTH_ERROR); // descriptors cut off by the list length
        }
        if (targetLen + segmentLen > MAX_DESCRIPTOR_LIST_LENGTH) {
            return Parsed.fail(Sense.PARAMETER_LIST_LENGTH_ERROR); // SPC-4: beyond MAXIMUM DESCRIPTOR LIST LENGTH
        }
        if (inlineLen != 0) {
            return Parsed.fail(Sense.invalidParameterField(12)); // MAXIMUM INLINE DATA LENGTH is 0
        }
        if (targetLen % TARGET_DESCRIPTOR_LENGTH != 0) {
            return Parsed.fail(Sense.invalidParameterField(2));
        }
        int targets = targetLen / TARGET_DESCRIPTOR_LENGTH;
        if (targets > MAX_TARGET_DESCRIPTORS) {
            return Parsed.fail(Sense.TOO_MANY_TARGET_DESCRIPTORS);
        }
        // Count the segments first (each says its own length) to refuse too many before looking inside.
        List<Integer> segmentOffsets = new ArrayList<>();
        int base = r + HEADER + targetLen;
        long pos = 0;
        while (pos < segmentLen) {
            if (pos + 4 > segmentLen) {
                return Parsed.fail(Sense.PARAMETER_LIST_LENGTH_ERROR);
            }
            int len = 4 + list.getUnsignedShort(base + (int) pos + 2);
            if (pos + len > segmentLen) {
                return Parsed.fail(Sense.PARAMETER_LIST_LENGTH_ERROR);
            }
            segmentOffsets.add(base + (int) pos);
            pos += len;
        }
        if (segmentOffsets.size() > MAX_SEGMENT_DESCRIPTORS) {
            return Parsed.fail(Sense.TOO_MANY_SEGMENT_DESCRIPTORS);
        }
        // Target descriptors: only identification descriptors for this LU.
        boolean[] reachable = new boolean[targets];
        for (int i = 0; i < targets; i++) {
            int d = r + HEADER + i * TARGET_DESCRIPTOR_LENGTH;
            int type = list.getUnsignedByte(d);
            if (type != IDENTIFICATION_TARGET) {
                return Parsed.fail(Sense.UNSUPPORTED_TARGET_DESCRIPTOR_TYPE.withFieldPointer(false, d - r));
            }
            int peripheral = list.getUnsignedByte(d + 1) & 0x1f;
            if (peripheral != 0) {
                return Parsed.fail(Sense.invalidParameterField(d - r + 1)); // only block devices here
            }
            // SPC-4 ignores LU ID TYPE and the NUL bit is obsolete: neither is checked.
            int blockLength = list.getUnsignedMedium(d + 29);
            reachable[i] = matches(list, d + 4, designators) && blockLength == blockSize;
        }
        List<Segment> segments = new ArrayList<>();
        for (int i = 0; i < segmentOffsets.size(); i++) {
            int d = segmentOffsets.get(i);
            int type = list.getUnsignedByte(d);
            if (type != BLOCK_TO_BLOCK) {
                return Parsed.fail(Sense.UNSUPPORTED_SEGMENT_DESCRIPTOR_TYPE.withFieldPointer(false, d - r));
            }
            if (list.getUnsignedShort(d + 2) != BLOCK_TO_BLOCK_LENGTH) {
                return Parsed.fail(Sense.invalidParameterField(d - r + 2));
            }
            // DC (byte 1) says whose block size counts: source and destination share ours, so either is right.
            int src = list.getUnsignedShort(d + 4);
            int dst = list.getUnsignedShort(d + 6);
            if (src >= targets || dst >= targets || !reachable[src] || !reachable[dst]) {
                return Parsed.fail(Sense.COPY_TARGET_NOT_REACHABLE.withCommandSpecific(i));
            }
            long n = list.getUnsignedShort(d + 10);
            long srcLba = list.getLong(d + 12);
            long dstLba = list.getLong(d + 20);
            if (!inRange(srcLba, n, blocks) || !inRange(dstLba, n, blocks)) {
                // The copy target would refuse it with LBA OUT OF RANGE; the copy manager reports the
                // segment that failed (SPC-4 6.4.3.x: COPY ABORTED, segment number in COMMAND-SPECIFIC).
                return Parsed.fail(Sense.COPY_ABORTED_NO_DETAIL.withCommandSpecific(i));
            }
            if (n * blockSize > MAX_SEGMENT_BYTES) {
                return Parsed.fail(Sense.invalidParameterField(d - r + 10));
            }
            segments.add(new Segment(srcLba, dstLba, n));
        }
        return new Parsed(new Plan(listId, usage, segments), null);
    }

    private static boolean inRange(long lba, long count, long blocks) {
        return Long.compareUnsigned(lba, blocks) <= 0 && count <= blocks - lba;
    }

    /** Whether the 20-byte designation descriptor at {@code at} equals one of ours (type, code set, value). */
    private static boolean matches(ByteBuf list, int at, List<byte[]> designators) {
        int codeSet = list.getUnsignedByte(at) & 0x0f;
        int type = list.getUnsignedByte(at + 1) & 0x0f;
        int len = list.getUnsignedByte(at + 3);
        if (len > 20) {
            return false;
        }
        byte[] value = new byte[len];
        list.getBytes(at + 4, value);
        for (byte[] d : designators) {
            if ((d[0] & 0x0f) == codeSet && (d[1] & 0x0f) == type && (d[1] & 0x30) == 0 && (d[3] & 0xff) == len
                    && Arrays.equals(Arrays.copyOfRange(d, 4, d.length), value)) {
                return true;
            }
        }
        return false;
    }
}
