package io.fastblock.gateway.scsi;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * Outcome of one SCSI command: status, sense (with CHECK CONDITION) and the data-in it produced
 * (owned by the receiver, who must release it). Data-in may be longer or shorter than the
 * initiator's expected length; the transport turns that into residuals.
 */
public record ScsiResult(int status, Sense sense, ByteBuf dataIn) {
    public static ScsiResult good() {
        return new ScsiResult(ScsiStatus.GOOD, null, Unpooled.EMPTY_BUFFER);
    }

    public static ScsiResult good(ByteBuf data) {
        return new ScsiResult(ScsiStatus.GOOD, null, data);
    }

    public static ScsiResult check(Sense sense) {
        return new ScsiResult(ScsiStatus.CHECK_CONDITION, sense, Unpooled.EMPTY_BUFFER);
    }

    /** RESERVATION CONFLICT: no sense data. */
    public static ScsiResult conflict() {
        return new ScsiResult(ScsiStatus.RESERVATION_CONFLICT, null, Unpooled.EMPTY_BUFFER);
    }

    /** TASK SET FULL: the session has as many commands in the gateway as it may; no sense data. */
    public static ScsiResult taskSetFull() {
        return new ScsiResult(ScsiStatus.TASK_SET_FULL, null, Unpooled.EMPTY_BUFFER);
    }

    public boolean isGood() {
        return status == ScsiStatus.GOOD;
    }
}
