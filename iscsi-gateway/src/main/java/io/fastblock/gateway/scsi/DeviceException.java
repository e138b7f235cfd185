package io.fastblock.gateway.scsi;

/** A failed device operation, with the reason the SCSI layer turns into sense data. */
public class DeviceException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public enum Reason {
        /** A replica failed the operation (MEDIUM ERROR). */
        IO_ERROR,
        /** The cluster has no space for the write (DATA PROTECT, SPACE ALLOCATION FAILED). */
        NO_SPACE,
        /** The volume cannot be reached right now (NOT READY). */
        UNAVAILABLE,
        /** This gateway no longer holds the volume's write lease (DATA PROTECT, WRITE PROTECTED). */
        FENCED,
        /** Offset or length outside the device (ILLEGAL REQUEST, LBA OUT OF RANGE). */
        OUT_OF_RANGE,
        /** The device does not implement the operation (e.g. unmap on a thick volume). */
        UNSUPPORTED
    }

    private final Reason reason;

    public DeviceException(Reason reason, String message) {
        super(message);
        this.reason = reason;
    }

    public DeviceException(Reason reason, String message, Throwable cause) {
        super(message, cause);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
