package io.fastblock.bench.initiator;

import io.netty.buffer.ByteBuf;

/** Builds the SBC-3 CDBs the load generator issues, choosing the 10-byte form when it fits. */
public final class Cdb {
    public static final int READ_10 = 0x28;
    public static final int WRITE_10 = 0x2a;
    public static final int READ_16 = 0x88;
    public static final int WRITE_16 = 0x8a;
    public static final int SERVICE_ACTION_IN_16 = 0x9e;
    public static final int READ_CAPACITY_16 = 0x10;
    public static final int TEST_UNIT_READY = 0x00;

    private Cdb() {
    }

    /** True when READ/WRITE(10) can address {@code lba} and {@code blocks}. */
    static boolean fits10(long lba, int blocks) {
        return lba >= 0 && lba + blocks <= 0xffffffffL && blocks <= 0xffff;
    }

    /** Writes a READ or WRITE CDB into bytes 32..47 of {@code bhs}. */
    public static void readWrite(ByteBuf bhs, boolean write, long lba, int blocks) {
        if (blocks <= 0) {
            throw new IllegalArgumentException("block count must be positive, got " + blocks);
        }
        bhs.setZero(32, 16);
        if (fits10(lba, blocks)) {
            bhs.setByte(32, write ? WRITE_10 : READ_10);
            bhs.setInt(34, (int) lba);
            bhs.setShort(39, blocks);
        } else {
            bhs.setByte(32, write ? WRITE_16 : READ_16);
            bhs.setLong(34, lba);
            bhs.setInt(42, blocks);
        }
    }

    /** READ CAPACITY(16) asking for {@code allocation} bytes. */
    public static void readCapacity16(ByteBuf bhs, int allocation) {
        bhs.setZero(32, 16);
        bhs.setByte(32, SERVICE_ACTION_IN_16);
        bhs.setByte(33, READ_CAPACITY_16);
        bhs.setInt(42, allocation);
    }

    /** The 8-byte LUN field for {@code lun} (SAM-5 peripheral or flat space addressing). */
    public static long lunField(int lun) {
        if (lun < 256) {
            return ((long) lun) << 48;
        }
        return ((long) (0x4000 | lun)) << 48;
    }
}
