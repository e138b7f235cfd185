package io.fastblock.bench.initiator;

/**
 * How one WRITE's data goes out (RFC 7143 section 4.2.5.2 / 13.x): how much rides in the command
 * PDU as immediate data, how much follows as unsolicited Data-Out, and how a data sequence (the
 * unsolicited burst or one R2T's request) is cut into PDUs no longer than the target accepts.
 * Pure arithmetic, no buffers.
 */
public final class WritePlan {
    private final int edtl;
    private final int immediate;
    private final int unsolicitedEnd;
    private final int maxSegment;
    private final int maxBurst;

    public WritePlan(int expectedDataTransferLength, SessionParams p) {
        if (expectedDataTransferLength < 0) {
            throw new IllegalArgumentException("negative transfer length " + expectedDataTransferLength);
        }
        this.edtl = expectedDataTransferLength;
        int firstBurst = Math.min(edtl, p.firstBurstLength());
        this.immediate = p.immediateData() ? Math.min(firstBurst, p.maxXmitDataSegmentLength()) : 0;
        this.unsolicitedEnd = p.initialR2T() ? immediate : firstBurst;
        this.maxSegment = p.maxXmitDataSegmentLength();
        this.maxBurst = p.maxBurstLength();
    }

    /** Bytes sent in the SCSI Command PDU itself. */
    public int immediateLength() {
        return immediate;
    }

    /** Offset where unsolicited data ends; bytes [immediate, unsolicitedEnd) go as unsolicited Data-Out. */
    public int unsolicitedEnd() {
        return unsolicitedEnd;
    }

    /** Bytes the target will ask for with R2Ts. */
    public int solicitedLength() {
        return edtl - unsolicitedEnd;
    }

    /** Number of Data-Out PDUs a sequence of {@code length} bytes takes. */
    public int pduCount(int length) {
        return (length + maxSegment - 1) / maxSegment;
    }

    /** Length of the {@code i}-th Data-Out PDU of a sequence of {@code length} bytes. */
    public int pduLength(int length, int i) {
        return Math.min(maxSegment, length - i * maxSegment);
    }

    /**
     * Checks an R2T against what this command can legally be asked for and returns null when it is
     * fine, else why not. Data already sent unsolicited is never asked for again at ERL 0.
     */
    public String checkR2T(int bufferOffset, int desiredLength) {
        if (desiredLength <= 0) {
            return "R2T asks for " + desiredLength + " bytes";
        }
        if (desiredLength > maxBurst) {
            return "R2T asks for " + desiredLength + " bytes, more than MaxBurstLength " + maxBurst;
        }
        if (bufferOffset < unsolicitedEnd) {
            return "R2T offset " + bufferOffset + " inside the unsolicited data (ends at " + unsolicitedEnd + ")";
        }
        if ((long) bufferOffset + desiredLength > edtl) {
            return "R2T range " + bufferOffset + "+" + desiredLength + " beyond the transfer length " + edtl;
        }
        return null;
    }
}
