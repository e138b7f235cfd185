package io.fastblock.gateway.iscsi.pdu;

/** RFC 7143 opcodes (byte 0, bits 5..0). */
public final class Opcode {
    private Opcode() {
    }

    // initiator -> target
    public static final int NOP_OUT = 0x00;
    public static final int SCSI_COMMAND = 0x01;
    public static final int TASK_MGMT_REQUEST = 0x02;
    public static final int LOGIN_REQUEST = 0x03;
    public static final int TEXT_REQUEST = 0x04;
    public static final int SCSI_DATA_OUT = 0x05;
    public static final int LOGOUT_REQUEST = 0x06;
    public static final int SNACK_REQUEST = 0x10;

    // target -> initiator
    public static final int NOP_IN = 0x20;
    public static final int SCSI_RESPONSE = 0x21;
    public static final int TASK_MGMT_RESPONSE = 0x22;
    public static final int LOGIN_RESPONSE = 0x23;
    public static final int TEXT_RESPONSE = 0x24;
    public static final int SCSI_DATA_IN = 0x25;
    public static final int LOGOUT_RESPONSE = 0x26;
    public static final int R2T = 0x31;
    public static final int ASYNC_MESSAGE = 0x32;
    public static final int REJECT = 0x3f;

    /** True for the opcodes an initiator may send (vendor codes 0x1c-0x1e included). */
    public static boolean isInitiatorOpcode(int op) {
        return op <= 0x06 || op == SNACK_REQUEST || (op >= 0x1c && op <= 0x1e);
    }
}
