package io.fastblock.bench.initiator;

/**
 * What login settled on, as far as the initiator's data path cares.
 *
 * @param initialR2T                 true when every write must wait for an R2T beyond its immediate data
 * @param immediateData              true when a SCSI Command PDU may carry write data
 * @param firstBurstLength           most unsolicited bytes (immediate + unsolicited Data-Out) per command
 * @param maxBurstLength             most bytes one R2T may ask for
 * @param maxXmitDataSegmentLength   the target's MaxRecvDataSegmentLength: longest data segment we may send
 * @param maxRecvDataSegmentLength   ours: longest data segment the target may send us
 * @param maxOutstandingR2T          R2Ts the target may have outstanding per task
 */
public record SessionParams(boolean initialR2T, boolean immediateData, int firstBurstLength, int maxBurstLength,
                            int maxXmitDataSegmentLength, int maxRecvDataSegmentLength, int maxOutstandingR2T) {
    /** RFC 7143 defaults, what applies for every key the target does not answer. */
    public static SessionParams rfcDefaults(int ourMaxRecv) {
        return new SessionParams(true, true, 65536, 262144, 8192, ourMaxRecv, 1);
    }
}
