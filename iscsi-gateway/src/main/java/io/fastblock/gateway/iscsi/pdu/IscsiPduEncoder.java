package io.fastblock.gateway.iscsi.pdu;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToMessageEncoder;
import java.util.List;

/**
 * Writes a PDU as BHS | AHS | data | zero padding, gluing the buffers together without copying
 * the data segment.
 */
@ChannelHandler.Sharable
public final class IscsiPduEncoder extends MessageToMessageEncoder<IscsiPdu> {
    private static final ByteBuf PADDING = Unpooled.unreleasableBuffer(
            Unpooled.directBuffer(4).writeZero(4).asReadOnly());

    @Override
    protected void encode(ChannelHandlerContext ctx, IscsiPdu pdu, List<Object> out) {
        out.add(encode(ctx.alloc().compositeDirectBuffer(4), pdu));
    }

    /** Builds the wire form of {@code pdu} in {@code buf} (retaining the PDU's buffers). */
    public static ByteBuf encode(CompositeByteBuf buf, IscsiPdu pdu) {
        int dataLen = pdu.data().readableBytes();
        int ahsLen = pdu.ahs().readableBytes();
        pdu.bhs().setByte(4, ahsLen / 4);
        pdu.bhs().setMedium(5, dataLen);
        buf.addComponent(true, pdu.bhs().retainedDuplicate());
        if (ahsLen > 0) {
            buf.addComponent(true, pdu.ahs().retainedDuplicate());
        }
        if (dataLen > 0) {
            buf.addComponent(true, pdu.data().retainedDuplicate());
            int pad = -dataLen & 3;
            if (pad > 0) {
                buf.addComponent(true, PADDING.slice(0, pad));
            }
        }
        return buf;
    }
}
