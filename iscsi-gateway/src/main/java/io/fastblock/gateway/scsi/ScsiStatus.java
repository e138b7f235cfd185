package io.fastblock.gateway.scsi;

/** SAM status codes. */
public final class ScsiStatus {
    private ScsiStatus() {
    }

    public static final int GOOD = 0x00;
    public static final int CHECK_CONDITION = 0x02;
    public static final int BUSY = 0x08;
    public static final int RESERVATION_CONFLICT = 0x18;
    public static final int TASK_SET_FULL = 0x28;
}
