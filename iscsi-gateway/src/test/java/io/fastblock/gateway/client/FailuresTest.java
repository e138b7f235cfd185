package io.fastblock.gateway.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.fastblock.gateway.scsi.DeviceException;
import io.fastblock.gateway.scsi.DeviceException.Reason;
import io.fastblock.protocol.Status;
import java.net.ConnectException;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

class FailuresTest {
    @Test
    void chainChangesRefreshTheRoute() {
        assertEquals(Failures.Action.REFRESH_AND_RETRY, Failures.actionFor(Status.STALE_CHAIN));
        assertEquals(Failures.Action.REFRESH_AND_RETRY, Failures.actionFor(Status.UNKNOWN_GROUP));
        assertEquals(Failures.Action.REFRESH_AND_RETRY, Failures.actionFor(Status.NOT_MEMBER));
        assertEquals(Failures.Action.RETRY, Failures.actionFor(Status.BUSY));
    }

    @Test
    void aFailedSuccessorIsWaitedOutThroughTheNamenode() {
        // A head answers IO_ERROR when its successor failed: the chain is repaired within the budget.
        assertEquals(Failures.Action.REFRESH_AND_RETRY, Failures.actionFor(Status.IO_ERROR));
        // ... and if the budget runs out, it is still a medium error.
        assertEquals(Reason.IO_ERROR, Failures.reasonFor(Status.IO_ERROR));
    }

    @Test
    void finalStatusesMapToDeviceReasons() {
        assertEquals(Reason.NO_SPACE, Failures.reasonFor(Status.NO_SPACE));
        assertEquals(Reason.FENCED, Failures.reasonFor(Status.STALE_EPOCH));
        assertEquals(Reason.IO_ERROR, Failures.reasonFor(Status.IO_ERROR));
        assertEquals(Reason.IO_ERROR, Failures.reasonFor(Status.CORRUPT));
        assertEquals(Reason.IO_ERROR, Failures.reasonFor(Status.BAD_REQUEST));
        assertEquals(Reason.IO_ERROR, Failures.reasonFor(Status.STALE_CHAIN));
        assertEquals(Reason.UNAVAILABLE, Failures.reasonFor(Status.BUSY));
        for (Status s : new Status[] {Status.NO_SPACE, Status.STALE_EPOCH, Status.CORRUPT, Status.BAD_REQUEST}) {
            assertEquals(Failures.Action.FAIL, Failures.actionFor(s), s.name());
        }
    }

    @Test
    void storageTransportFailures() {
        NodeAddress n = new NodeAddress("127.0.0.1", 9401);
        var lost = new StorageRequestException(StorageRequestException.Kind.CONNECTION_LOST, n, "x", null);
        var refused = new StorageRequestException(StorageRequestException.Kind.CONNECT_FAILED, n, "x", null);
        var timeout = new StorageRequestException(StorageRequestException.Kind.TIMEOUT, n, "x", null);
        var closed = new StorageRequestException(StorageRequestException.Kind.CLIENT_CLOSED, n, "x", null);
        assertEquals(Failures.Action.REFRESH_AND_RETRY, Failures.actionFor(lost));
        assertEquals(Failures.Action.REFRESH_AND_RETRY, Failures.actionFor(refused));
        // A dead node answers nothing: its chain is being repaired, so ask for the route and resend.
        assertEquals(Failures.Action.REFRESH_AND_RETRY, Failures.actionFor(timeout));
        assertEquals(Failures.Action.FAIL, Failures.actionFor(closed));
        assertEquals(Reason.IO_ERROR, Failures.toDeviceException(new CompletionException(timeout)).reason());
        assertEquals(Reason.UNAVAILABLE, Failures.toDeviceException(closed).reason());
    }

    @Test
    void namenodeFailures() {
        assertEquals(Reason.UNAVAILABLE, Failures.toDeviceException(
                new NamenodeUnavailableException("down", new ConnectException())).reason());
        assertEquals(Reason.NO_SPACE, Failures.toDeviceException(
                new NamenodeException(507, "NO_SPACE", "cluster full")).reason());
        assertEquals(Reason.NO_SPACE, Failures.toDeviceException(
                new NamenodeException(409, "INSUFFICIENT_CAPACITY", "cluster full")).reason());
        assertEquals(Reason.UNAVAILABLE, Failures.toDeviceException(
                new NamenodeException(404, "VOLUME_NOT_FOUND", "gone")).reason());
        assertEquals(Reason.UNAVAILABLE, Failures.toDeviceException(
                new NamenodeException(500, "INTERNAL", "zk down")).reason());
        assertEquals(Reason.IO_ERROR, Failures.toDeviceException(
                new NamenodeException(400, "INVALID_CHUNK_INDEX", "bad")).reason());
    }

    @Test
    void deviceExceptionsPassThroughUnwrapped() {
        DeviceException d = new DeviceException(Reason.OUT_OF_RANGE, "x");
        assertSame(d, Failures.toDeviceException(new CompletionException(d)));
    }
}
