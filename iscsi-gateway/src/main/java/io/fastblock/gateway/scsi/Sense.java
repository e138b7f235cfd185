package io.fastblock.gateway.scsi;

/**
 * A sense key with its additional sense code and qualifier, written as fixed-format sense data.
 * {@code information} is the INFORMATION field (-1: none, VALID=0); {@code commandSpecific} the
 * COMMAND-SPECIFIC INFORMATION field (-1: none); {@code keySpecific} the 3-byte SENSE KEY SPECIFIC
 * field including its SKSV bit (-1: none), e.g. the field pointer of an invalid CDB field.
 */
public record Sense(int key, int asc, int ascq, long information, long commandSpecific, int keySpecific) {
    /** Sense without INFORMATION. */
    public Sense(int key, int asc, int ascq) {
        this(key, asc, ascq, -1, -1, -1);
    }

    public Sense(int key, int asc, int ascq, long information) {
        this(key, asc, ascq, information, -1, -1);
    }

    /** This sense with the INFORMATION field set (VALID=1), e.g. the miscompare offset. */
    public Sense withInformation(long info) {
        return new Sense(key, asc, ascq, info, commandSpecific, keySpecific);
    }

    /** This sense with COMMAND-SPECIFIC INFORMATION (e.g. the failed segment of an EXTENDED COPY). */
    public Sense withCommandSpecific(long info) {
        return new Sense(key, asc, ascq, information, info, keySpecific);
    }

    /**
     * This sense pointing at the offending field (SPC-4 4.5.2.4.2): byte {@code index} of the CDB
     * ({@code inCdb}) or of the parameter list. Initiators use it to tell "this service action is not
     * implemented" (pointer at the service action byte) from other invalid fields.
     */
    public Sense withFieldPointer(boolean inCdb, int index) {
        return new Sense(key, asc, ascq, information, commandSpecific, 0x800000 | (inCdb ? 0x400000 : 0) | (index & 0xffff));
    }

    /** Same key, code and qualifier, whatever the information fields say. */
    public boolean sameCode(Sense other) {
        return other != null && key == other.key && asc == other.asc && ascq == other.ascq;
    }

    /** INVALID FIELD IN CDB pointing at CDB byte {@code index}. */
    public static Sense invalidCdbField(int index) {
        return INVALID_FIELD_IN_CDB.withFieldPointer(true, index);
    }

    /** INVALID FIELD IN PARAMETER LIST pointing at parameter list byte {@code index}. */
    public static Sense invalidParameterField(int index) {
        return INVALID_FIELD_IN_PARAMETER_LIST.withFieldPointer(false, index);
    }

    public static final int NO_SENSE = 0x00;
    public static final int NOT_READY = 0x02;
    public static final int MEDIUM_ERROR = 0x03;
    public static final int HARDWARE_ERROR = 0x04;
    public static final int ILLEGAL_REQUEST = 0x05;
    public static final int UNIT_ATTENTION = 0x06;
    public static final int DATA_PROTECT = 0x07;
    public static final int COPY_ABORTED = 0x0A;
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
    public static final Sense TOO_MANY_TARGET_DESCRIPTORS = new Sense(ILLEGAL_REQUEST, 0x26, 0x06);
    public static final Sense UNSUPPORTED_TARGET_DESCRIPTOR_TYPE = new Sense(ILLEGAL_REQUEST, 0x26, 0x07);
    public static final Sense TOO_MANY_SEGMENT_DESCRIPTORS = new Sense(ILLEGAL_REQUEST, 0x26, 0x08);
    public static final Sense UNSUPPORTED_SEGMENT_DESCRIPTOR_TYPE = new Sense(ILLEGAL_REQUEST, 0x26, 0x09);
    public static final Sense OPERATION_IN_PROGRESS = new Sense(ILLEGAL_REQUEST, 0x00, 0x16);
    /** EXTENDED COPY: a segment named a copy target this copy manager cannot reach (or does not have). */
    public static final Sense COPY_TARGET_NOT_REACHABLE = new Sense(COPY_ABORTED, 0x0D, 0x02);
    /** EXTENDED COPY: a segment failed on its copy target (the target's own error is in the detail). */
    public static final Sense COPY_ABORTED_NO_DETAIL = new Sense(COPY_ABORTED, 0x00, 0x00);
    public static final Sense LUN_NOT_SUPPORTED = new Sense(ILLEGAL_REQUEST, 0x25, 0x00);
    public static final Sense SAVING_NOT_SUPPORTED = new Sense(ILLEGAL_REQUEST, 0x39, 0x00);
    public static final Sense POWER_ON_RESET = new Sense(UNIT_ATTENTION, 0x29, 0x00);
    /** SBC: the capacity changed (a volume extended while in use); READ CAPACITY tells the new size. */
    public static final Sense CAPACITY_DATA_HAS_CHANGED = new Sense(UNIT_ATTENTION, 0x2A, 0x09);
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
        if (commandSpecific >= 0) {
            s[8] = (byte) (commandSpecific >>> 24);
            s[9] = (byte) (commandSpecific >>> 16);
            s[10] = (byte) (commandSpecific >>> 8);
            s[11] = (byte) commandSpecific;
        }
        if (keySpecific >= 0) {
            s[15] = (byte) (keySpecific >>> 16);
            s[16] = (byte) (keySpecific >>> 8);
            s[17] = (byte) keySpecific;
        }
        s[2] = (byte) key;
        s[7] = 10; // additional sense length
        s[12] = (byte) asc;
        s[13] = (byte) ascq;
        return s;
    }

    @Override
    public String toString() {
        return String.format("Sense[%02x/%02x/%02x%s%s%s]", key, asc, ascq,
                information >= 0 ? " info=" + information : "",
                commandSpecific >= 0 ? " cmd=" + commandSpecific : "",
                keySpecific >= 0 ? String.format(" sks=%06x", keySpecific) : "");
    }
}
