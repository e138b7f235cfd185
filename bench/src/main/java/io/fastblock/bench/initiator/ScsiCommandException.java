package io.fastblock.bench.initiator;

/** A SCSI command that ended with a status other than GOOD, or with an iSCSI Response other than "completed". */
public final class ScsiCommandException extends Exception {
    private static final long serialVersionUID = 1L;

    private final int status;
    private final int senseKey;
    private final int asc;
    private final int ascq;

    public ScsiCommandException(String message, int status, int senseKey, int asc, int ascq) {
        super(message);
        this.status = status;
        this.senseKey = senseKey;
        this.asc = asc;
        this.ascq = ascq;
    }

    public int status() {
        return status;
    }

    public int senseKey() {
        return senseKey;
    }

    public int asc() {
        return asc;
    }

    public int ascq() {
        return ascq;
    }
}
