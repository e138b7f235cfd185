package io.fastblock.gateway.iscsi.pdu;

import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * iSCSI header and data digests (RFC 7143 section 13.1): CRC32C as {@link CRC32C} computes it,
 * sent in little-endian byte order as RFC 7143 Appendix B's examples and every initiator do.
 */
public final class Crc32c {
    private Crc32c() {
    }

    /** Adds {@code length} bytes of {@code buf} from {@code index} to {@code crc} without copying. */
    static void update(CRC32C crc, ByteBuf buf, int index, int length) {
        if (length == 0) {
            return;
        }
        if (buf.nioBufferCount() == 1) {
            crc.update(buf.nioBuffer(index, length));
        } else {
            for (ByteBuffer b : buf.nioBuffers(index, length)) {
                crc.update(b);
            }
        }
    }

    /** The value as it appears on the wire, read as a big-endian int. */
    static int wire(CRC32C crc) {
        return Integer.reverseBytes((int) crc.getValue());
    }

    /** Digest of {@code length} bytes of {@code buf} followed by {@code pad} zero bytes. */
    public static int of(ByteBuf buf, int index, int length, int pad) {
        CRC32C crc = new CRC32C();
        update(crc, buf, index, length);
        for (int i = 0; i < pad; i++) {
            crc.update(0);
        }
        return wire(crc);
    }
}
