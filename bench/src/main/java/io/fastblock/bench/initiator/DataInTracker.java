package io.fastblock.bench.initiator;

/**
 * Checks the Data-In PDUs of one read as they arrive: DataSN 0, 1, 2, ..., each PDU starting where
 * the previous ended (we negotiate DataPDUInOrder=Yes and DataSequenceInOrder=Yes) and nothing
 * beyond the expected transfer length. Pure logic, no buffers.
 */
public final class DataInTracker {
    private final int edtl;
    private int nextDataSN;
    private int received;

    public DataInTracker(int expectedDataTransferLength) {
        this.edtl = expectedDataTransferLength;
    }

    /** Accepts one PDU; returns null when it fits, else what is wrong with it. */
    public String accept(int dataSN, int bufferOffset, int length) {
        if (dataSN != nextDataSN) {
            return "Data-In DataSN " + Integer.toUnsignedString(dataSN) + ", expected " + nextDataSN;
        }
        if (bufferOffset != received) {
            return "Data-In offset " + bufferOffset + ", expected " + received;
        }
        if ((long) bufferOffset + length > edtl) {
            return "Data-In " + bufferOffset + "+" + length + " beyond the transfer length " + edtl;
        }
        nextDataSN++;
        received += length;
        return null;
    }

    public int received() {
        return received;
    }
}
