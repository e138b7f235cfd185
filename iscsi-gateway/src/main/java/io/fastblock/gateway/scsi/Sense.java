package io.fastblock.gateway.scsi;

/** A sense key with its additional sense code and qualifier, written as fixed-format sense data. */
public record Sense(int key, int asc, int ascq, long information) {
    /** Sense without INFORMATION. */
    public Sense(int key, int asc, int ascq) {
        this(key, asc, ascq, -1);
    }

    /** This sense with the INFORMATION field set (VALID=1), e.g. the miscompare offset. */
    public Sense withInformation(long info) {
        return new Sense(key, asc, ascq, info);
    }

    public static final int NO_SENSE = 0x00;
    public static final int NOT_READY = 0x02;
    public static final int MEDIUM_ERROR = 0x03;
    public static final int HARDWARE_ERROR = 0x04;
    public static final int ILLEGAL_REQUEST = 0x05;
    public static final int UNIT_ATTENTION = 0x06;
    public static final int DATA_PROTECT = 0x07;
    public static final int ABORTED_COMMAND = 0x0B;

    public static final int MISCOMPARE = 0x0E;
    public static final Sense MISCOMPARE_DURING_VERIFY = new Sense(MISCOMPARE, 0x1D, 0x00);
    public static final Sense NONE = new Sense(NO_SENSE, 0, 0);
    public static final Sense INVALID_OPCODE = new Sense(ILLEGAL_REQUEST, 0x20, 0x00);
    public static final Sense LBA_OUT_OF_RANGE = new Sense(ILLEGAL_REQUEST, 0x21, 0x00);
    public static final Sense INVALID_FIELD_IN_CDB = new Sense(ILLEGAL_REQUEST, 0x24, 0x00);
    public static final Sense PARAMETER_LIST_LENGTH_ERROR = new Sense(ILLEGAL_REQUEST, 0x1A, 0x00);
    public static final Sense INVALID_FIELD_IN_PARAMETER_LIST = new Sense(ILLEGAL_REQUEST, 0x26, 0x00);
    public static final Sense INVALID_RELEASE_OF_PERSISTENT_RESERVATION = new Sense(ILLEGAL_REQUEST, 0x26, 0x04);
    public static final Sense LUN_NOT_SUPPORTED = new Sense(ILLEGAL_REQUEST, 0x25, 0x00);
    public static final Sense SAVING_NOT_SUPPORTED = new Sense(ILLEGAL_REQUEST, 0x39, 0x00);
    public static final Sense POWER_ON_RESET = new Sense(UNIT_ATTENTION, 0x29, 0x00);
    public static final Sense BUS_DEVICE_RESET = new Sense(UNIT_ATTENTION, 0x29, 0x03);
    public static final Sense COMMANDS_CLEARED_BY_ANOTHER_INITIATOR = new Sense(UNIT_ATTENTION, 0x2F, 0x00);
    public static final Sense RESERVATIONS_PREEMPTED = new Sense(UNIT_ATTENTION, 0x2A, 0x03);
    public static final Sense RESERVATIONS_RELEASED = new Sense(UNIT_ATTENTION, 0x2A, 0x04);
    public static final Sense REGISTRATIONS_PREEMPTED = new Sense(UNIT_ATTENTION, 0x2A, 0x05);
    public static final Sense READ_ERROR = new Sense(MEDIUM_ERROR, 0x11, 0x00);
    public static final Sense WRITE_ERROR = new Sense(MEDIUM_ERROR, 0x0C, 0x00);
    public static final Sense SPACE_ALLOCATION_FAILED = new Sense(DATA_PROTECT, 0x27, 0x07);
    public static final Sense WRITE_PROTECTED = new Sense(DATA_PROTECT, 0x27, 0x00);
    public static final Sense LUN_NOT_READY = new Sense(NOT_READY, 0x04, 0x00);
    public static final Sense INTERNAL_TARGET_FAILURE = new Sense(HARDWARE_ERROR, 0x44, 0x00);
    /** iSCSI: the initiator sent an amount of data the command did not allow. */
    public static final Sense INCORRECT_DATA_AMOUNT = new Sense(ABORTED_COMMAND, 0x0C, 0x0D);

    /** iSCSI: a data digest (CRC32C) error on data-out; the command was not executed. */
    public static final Sense PROTOCOL_CRC_ERROR = new Sense(ABORTED_COMMAND, 0x47, 0x05);

    public static final int FIXED_LENGTH = 18;

    /** Fixed-format (0x70) sense data, 18 bytes. */
    public byte[] toFixedFormat() {
        byte[] s = new byte[FIXED_LENGTH];
        s[0] = (byte) (information >= 0 ? 0xF0 : 0x70);
        if (information >= 0) {
            s[3] = (byte) (information >>> 24);
            s[4] = (byte) (information >>> 16);
            s[5] = (byte) (information >>> 8);
            s[6] = (byte) information;
        }
        s[2] = (byte) key;
        s[7] = 10; // additional sense length
        s[12] = (byte) asc;
        s[13] = (byte) ascq;
        return s;
    }

    @Override
    public String toString() {
        return String.format("Sense[%02x/%02x/%02x%s]", key, asc, ascq, information >= 0 ? " info=" + information : "");
    }
}
