package io.fastblock.gateway.scsi;

import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;

/**
 * Takes ownership of a result's data-in for a test: copies it to an untracked heap buffer and
 * releases the original at once, so a test that only looks at the status cannot leak it.
 */
final class ResultTracker {
    private ResultTracker() {
    }

    static ScsiResult owned(ScsiResult r) {
        byte[] data = ByteBufUtil.getBytes(r.dataIn());
        r.dataIn().release();
        return new ScsiResult(r.status(), r.sense(), Unpooled.wrappedBuffer(data));
    }
}
