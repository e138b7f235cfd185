package io.fastblock.gateway.iscsi.pdu;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToMessageEncoder;
import java.util.List;

/**
 * Writes a PDU as BHS | AHS | [header digest] | data | zero padding | [data digest], gluing the
 * buffers together without copying the data segment. One per connection: digests are switched on
 * after login.
 */
public final class IscsiPduEncoder extends MessageToMessageEncoder<IscsiPdu> {
    private static final ByteBuf PADDING = Unpooled.unreleasableBuffer(
            Unpooled.directBuffer(4).writeZero(4).asReadOnly());

    private boolean headerDigest;
    private boolean dataDigest;

    /** Turns CRC32C digests on for every PDU written after this call (never for Login PDUs). */
    public void digests(boolean header, boolean data) {
        this.headerDigest = header;
        this.dataDigest = data;
    }

    @Override
    protected void encode(ChannelHandlerContext ctx, IscsiPdu pdu, List<Object> out) {
        out.add(encode(ctx.alloc().compositeDirectBuffer(6), pdu, headerDigest, dataDigest));
    }

    /** Builds the wire form of {@code pdu} in {@code buf} (retaining the PDU's buffers), no digests. */
    public static ByteBuf encode(CompositeByteBuf buf, IscsiPdu pdu) {
        return encode(buf, pdu, false, false);
    }

    public static ByteBuf encode(CompositeByteBuf buf, IscsiPdu pdu, boolean headerDigest, boolean dataDigest) {
        int dataLen = pdu.data().readableBytes();
        int ahsLen = pdu.ahs().readableBytes();
        pdu.bhs().setByte(4, ahsLen / 4);
        pdu.bhs().setMedium(5, dataLen);
        buf.addComponent(true, pdu.bhs().retainedDuplicate());
        if (ahsLen > 0) {
            buf.addComponent(true, pdu.ahs().retainedDuplicate());
        }
        if (headerDigest) {
            java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
            Crc32c.update(crc, pdu.bhs(), pdu.bhs().readerIndex(), IscsiPdu.BHS_LENGTH);
            Crc32c.update(crc, pdu.ahs(), pdu.ahs().readerIndex(), ahsLen);
            buf.addComponent(true, buf.alloc().buffer(4, 4).writeInt(Crc32c.wire(crc)));
        }
        if (dataLen > 0) {
            buf.addComponent(true, pdu.data().retainedDuplicate());
            int pad = -dataLen & 3;
            if (pad > 0) {
                buf.addComponent(true, PADDING.slice(0, pad));
            }
            if (dataDigest) {
                int d = Crc32c.of(pdu.data(), pdu.data().readerIndex(), dataLen, pad);
                buf.addComponent(true, buf.alloc().buffer(4, 4).writeInt(d));
            }
        }
        return buf;
    }
}
