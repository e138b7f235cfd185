package io.fastblock.gateway.iscsi.session;

import io.netty.buffer.ByteBuf;

/**
 * One SCSI command of a session from arrival to response: its CDB, the data-out being gathered
 * (immediate, unsolicited and solicited by R2T) and where it is in its life. Event loop only.
 */
final class ScsiTask {
    final int itt;
    final long lun;
    final ByteBuf cdb;
    final int cmdSN;
    final boolean read;
    final boolean write;
    final long edtl;
    /** Data-out bytes the CDB asks for (residuals of writes are computed against it). */
    final long needed;
    /** Bytes we keep (min(EDTL, needed)); data beyond is received and dropped. */
    final int bufferLength;
    /** The data-out as it arrives (null when the command keeps none). */
    DataOutPieces pieces;
    /** The data-out handed to the SCSI layer, assembled from {@link #pieces} once all of it is in. */
    ByteBuf dataOut;

    boolean delivered;
    /** Holds a slot of the session's CmdSN window (delivered, not immediate, not yet answered or aborted). */
    boolean holdsSlot;
    boolean executing;
    boolean aborted;
    /** Some data-out arrived with a bad data digest: the command fails with 0x0B/0x47/0x05. */
    boolean digestError;
    /**
     * The task's claim on the gateway's {@link DataBudget}, from its delivery until its data is gone;
     * null for commands without data, and once {@link #release} or a read's last Data-In gave it back.
     */
    DataBudget.Claim memory;
    /** The claim was granted and this loop knows it (set here, so {@link #progress} needs no lock). */
    boolean memoryGranted;
    /** Run after an aborted task's in-flight I/O finished (the TMF response). */
    Runnable afterAbort;

    // unsolicited phase
    boolean unsolicitedDone;
    long unsolicitedReceived;
    int unsolicitedDataSN;

    // solicited phase
    long nextR2TOffset;
    int r2tSN;
    int outstandingR2T;

    ScsiTask(int itt, long lun, ByteBuf cdb, int cmdSN, boolean read, boolean write, long edtl, long needed,
             int bufferLength) {
        this.itt = itt;
        this.lun = lun;
        this.cdb = cdb;
        this.cmdSN = cmdSN;
        this.read = read;
        this.write = write;
        this.edtl = edtl;
        this.needed = needed;
        this.bufferLength = bufferLength;
    }

    /** All data-out we will ask for has arrived. */
    boolean dataComplete() {
        return unsolicitedDone && outstandingR2T == 0 && nextR2TOffset >= bufferLength;
    }

    /** The task may go on to R2Ts and the device: it has no data, or its claim was granted. */
    boolean mayMoveData() {
        return memory == null || memoryGranted;
    }

    /** Hands the claim to whoever frees the data last (a read's final Data-In write); null if none. */
    DataBudget.Claim takeMemory() {
        DataBudget.Claim m = memory;
        memory = null;
        return m;
    }

    void release() {
        if (memory != null) {
            memory.release();
            memory = null;
        }
        cdb.release();
        if (pieces != null) {
            pieces.release();
        }
        if (dataOut != null) {
            dataOut.release();
            dataOut = null;
        }
    }

    /** One outstanding R2T: the Data-Out sequence it solicited. */
    static final class R2TState {
        final ScsiTask task;
        final int ttt;
        final long offset;
        final int length;
        long received;
        int nextDataSN;

        R2TState(ScsiTask task, int ttt, long offset, int length) {
            this.task = task;
            this.ttt = ttt;
            this.offset = offset;
            this.length = length;
        }
    }
}
