package io.fastblock.gateway.client;

import io.fastblock.gateway.scsi.DeviceException;
import io.fastblock.protocol.Status;

/** How the client reacts to each kind of failure, and which device error it finally becomes. */
public final class Failures {
    public enum Action {
        /** Forget the chunk's route, look it up again, resend. */
        REFRESH_AND_RETRY,
        /** Resend to the same place after a pause. */
        RETRY,
        /** Give up now. */
        FAIL
    }

    private Failures() {
    }

    public static Action actionFor(Status status) {
        return switch (status) {
            case STALE_CHAIN, UNKNOWN_GROUP, NOT_MEMBER -> Action.REFRESH_AND_RETRY;
            // A head answers IO_ERROR when its successor failed: the chain is about to be repaired,
            // and the retry budget outlasts the repair. (A read's IO_ERROR also tries another member.)
            case IO_ERROR -> Action.REFRESH_AND_RETRY;
            // The node is alive and in the chain, only overloaded: no need to ask the namenode.
            case BUSY -> Action.RETRY;
            case OK, STALE_EPOCH, NO_SPACE, BAD_REQUEST, CORRUPT -> Action.FAIL;
        };
    }

    /** The device error for a status once it is final (no retry left or not retryable). */
    public static DeviceException.Reason reasonFor(Status status) {
        return switch (status) {
            case NO_SPACE -> DeviceException.Reason.NO_SPACE;
            case STALE_EPOCH -> DeviceException.Reason.FENCED;
            // Overload is transient: NOT READY makes the initiator retry rather than report a medium error.
            case BUSY -> DeviceException.Reason.UNAVAILABLE;
            case OK, STALE_CHAIN, NOT_MEMBER, UNKNOWN_GROUP, IO_ERROR, BAD_REQUEST, CORRUPT -> DeviceException.Reason.IO_ERROR;
        };
    }

    public static Action actionFor(StorageRequestException e) {
        return switch (e.kind()) {
            // The node may be dead or have left the chain: ask the namenode again. Resending a write
            // that may have been applied is safe: same bytes at the same offset.
            case CONNECT_FAILED, CONNECTION_LOST, TIMEOUT -> Action.REFRESH_AND_RETRY;
            case CLIENT_CLOSED -> Action.FAIL;
        };
    }

    public static DeviceException.Reason reasonFor(StorageRequestException e) {
        return e.kind() == StorageRequestException.Kind.CLIENT_CLOSED
                ? DeviceException.Reason.UNAVAILABLE : DeviceException.Reason.IO_ERROR;
    }

    /** Any failure on the way (namenode, storage, bugs) as the device error the SCSI layer reports. */
    public static DeviceException toDeviceException(Throwable failure) {
        Throwable t = NamenodeClient.unwrap(failure);
        if (t instanceof DeviceException d) {
            return d;
        }
        if (t instanceof NamenodeUnavailableException) {
            return new DeviceException(DeviceException.Reason.UNAVAILABLE, t.getMessage(), t);
        }
        if (t instanceof NamenodeException ne) {
            String code = ne.code();
            if (ne.httpStatus() == 507 || code.contains("SPACE") || code.contains("CAPACITY")) {
                return new DeviceException(DeviceException.Reason.NO_SPACE, ne.getMessage(), ne);
            }
            if (ne.httpStatus() == 404 || ne.httpStatus() >= 500) {
                return new DeviceException(DeviceException.Reason.UNAVAILABLE, ne.getMessage(), ne);
            }
            return new DeviceException(DeviceException.Reason.IO_ERROR, ne.getMessage(), ne);
        }
        if (t instanceof StorageRequestException se) {
            return new DeviceException(reasonFor(se), se.getMessage(), se);
        }
        return new DeviceException(DeviceException.Reason.IO_ERROR, String.valueOf(t), t);
    }
}
