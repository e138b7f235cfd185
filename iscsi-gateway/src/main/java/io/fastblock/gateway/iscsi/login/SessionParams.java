package io.fastblock.gateway.iscsi.login;

/**
 * Operational parameters in force for a session/connection after negotiation. Starts at the
 * RFC 7143 defaults; {@link LoginNegotiator} overwrites what was negotiated.
 */
public final class SessionParams {
    /** What we declare we can receive in one data segment. */
    public static final int OUR_MAX_RECV_DATA_SEGMENT_LENGTH = 262144;
    public static final int OUR_FIRST_BURST_LENGTH = 262144;
    public static final int OUR_MAX_BURST_LENGTH = 1048576;
    public static final int OUR_MAX_OUTSTANDING_R2T = 4;

    /** Set by the login before keys are negotiated: discovery sessions never use digests. */
    public boolean discovery;
    public boolean headerDigest;
    public boolean dataDigest;
    public int maxConnections = 1;
    public boolean initialR2T = true;
    public boolean immediateData = true;
    /** The initiator's declared limit: the largest data segment we may send. */
    public int initiatorMaxRecvDataSegmentLength = 8192;
    public int maxBurstLength = 262144;
    public int firstBurstLength = 65536;
    public int defaultTime2Wait = 2;
    public int defaultTime2Retain = 20;
    public int maxOutstandingR2T = 1;
    public boolean dataPduInOrder = true;
    public boolean dataSequenceInOrder = true;
    public int errorRecoveryLevel;

    @Override
    public String toString() {
        return "SessionParams[initialR2T=" + initialR2T + " immediateData=" + immediateData
                + " initiatorMRDSL=" + initiatorMaxRecvDataSegmentLength + " maxBurst=" + maxBurstLength
                + " firstBurst=" + firstBurstLength + " maxR2T=" + maxOutstandingR2T + "]";
    }
}
