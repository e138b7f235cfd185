package io.fastblock.bench.initiator;

import io.fastblock.gateway.iscsi.pdu.IscsiPdu;
import io.fastblock.gateway.iscsi.pdu.IscsiProtocolException;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.util.List;

/**
 * Frames the target-to-initiator byte stream into {@link IscsiPdu}s (the gateway's decoder accepts
 * only initiator opcodes). Digests are never negotiated by this initiator, so the frame is BHS |
 * AHS | data | padding. The data segment is a retained slice, not a copy.
 */
public final class TargetPduDecoder extends ByteToMessageDecoder {
    private final int maxDataSegmentLength;

    public TargetPduDecoder(int maxDataSegmentLength) {
        this.maxDataSegmentLength = maxDataSegmentLength;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        IscsiPdu pdu = decodeOne(in);
        if (pdu != null) {
            out.add(pdu);
        }
    }

    /** One PDU from {@code in}, or null when more bytes are needed. */
    public IscsiPdu decodeOne(ByteBuf in) {
        if (in.readableBytes() < IscsiPdu.BHS_LENGTH) {
            return null;
        }
        int start = in.readerIndex();
        int b0 = in.getByte(start) & 0xff;
        int op = b0 & 0x3f;
        if ((b0 & 0xc0) != 0 || op < 0x20) {
            throw new IscsiProtocolException(String.format("not a target PDU: byte0=0x%02x", b0));
        }
        int ahsLen = (in.getByte(start + 4) & 0xff) * 4;
        int dataLen = in.getMedium(start + 5);
        if (dataLen > maxDataSegmentLength) {
            throw new IscsiProtocolException("DataSegmentLength " + dataLen + " exceeds our MaxRecvDataSegmentLength "
                    + maxDataSegmentLength);
        }
        int padded = (dataLen + 3) & ~3;
        if (in.readableBytes() < IscsiPdu.BHS_LENGTH + ahsLen + padded) {
            return null;
        }
        ByteBuf bhs = in.readRetainedSlice(IscsiPdu.BHS_LENGTH);
        ByteBuf ahs = in.readRetainedSlice(ahsLen);
        ByteBuf data = in.readRetainedSlice(dataLen);
        in.skipBytes(padded - dataLen);
        return new IscsiPdu(bhs, ahs, data);
    }
}
