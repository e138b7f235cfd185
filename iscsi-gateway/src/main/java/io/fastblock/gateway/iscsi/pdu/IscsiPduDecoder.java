package io.fastblock.gateway.iscsi.pdu;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Frames the inbound byte stream into {@link IscsiPdu}s. The data segment is a retained slice of
 * the cumulation buffer, not a copy. A PDU that cannot be framed (unknown opcode, data segment
 * beyond our MaxRecvDataSegmentLength) closes the connection: at that point the stream has lost
 * its framing and nothing after it can be trusted.
 */
public final class IscsiPduDecoder extends ByteToMessageDecoder {
    private static final Logger LOG = LoggerFactory.getLogger(IscsiPduDecoder.class);

    private final int maxDataSegmentLength;
    private boolean headerDigest;
    private boolean dataDigest;

    public IscsiPduDecoder(int maxDataSegmentLength) {
        this.maxDataSegmentLength = maxDataSegmentLength;
    }

    /** Turns CRC32C digests on after the login phase (never on Login PDUs). */
    public void digests(boolean header, boolean data) {
        this.headerDigest = header;
        this.dataDigest = data;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        IscsiPdu pdu;
        try {
            pdu = decodeOne(in);
        } catch (IscsiProtocolException e) {
            LOG.warn("closing {}: {}", ctx.channel().remoteAddress(), e.getMessage());
            in.skipBytes(in.readableBytes());
            ctx.close();
            return;
        }
        if (pdu != null) {
            out.add(pdu);
        }
    }

    /** Decodes one PDU from {@code in} or returns null when more bytes are needed. */
    public IscsiPdu decodeOne(ByteBuf in) {
        if (in.readableBytes() < IscsiPdu.BHS_LENGTH) {
            return null;
        }
        int start = in.readerIndex();
        int op = in.getByte(start) & 0x3f;
        if ((in.getByte(start) & 0x80) != 0 || !Opcode.isInitiatorOpcode(op)) {
            throw new IscsiProtocolException(String.format("not an initiator PDU: byte0=0x%02x",
                    in.getByte(start) & 0xff));
        }
        int ahsLen = (in.getByte(start + 4) & 0xff) * 4;
        int dataLen = in.getUnsignedMedium(start + 5);
        if (dataLen > maxDataSegmentLength) {
            throw new IscsiProtocolException("DataSegmentLength " + dataLen
                    + " exceeds MaxRecvDataSegmentLength " + maxDataSegmentLength);
        }
        int padded = (dataLen + 3) & ~3;
        int hd = headerDigest ? 4 : 0;
        int dd = dataDigest && dataLen > 0 ? 4 : 0;
        int total = IscsiPdu.BHS_LENGTH + ahsLen + hd + padded + dd;
        if (in.readableBytes() < total) {
            return null;
        }
        if (headerDigest) {
            int want = in.getInt(start + IscsiPdu.BHS_LENGTH + ahsLen);
            if (Crc32c.of(in, start, IscsiPdu.BHS_LENGTH + ahsLen, 0) != want) {
                // The header cannot be trusted, so neither can the framing of what follows.
                throw new IscsiProtocolException(String.format("header digest error (opcode 0x%02x)", op));
            }
        }
        boolean badData = false;
        if (dd > 0) {
            int dataStart = start + IscsiPdu.BHS_LENGTH + ahsLen + hd;
            badData = Crc32c.of(in, dataStart, padded, 0) != in.getInt(dataStart + padded);
        }
        ByteBuf bhs = in.readRetainedSlice(IscsiPdu.BHS_LENGTH);
        ByteBuf ahs = in.readRetainedSlice(ahsLen);
        in.skipBytes(hd);
        ByteBuf data = in.readRetainedSlice(dataLen);
        in.skipBytes(padded - dataLen + dd);
        IscsiPdu pdu = new IscsiPdu(bhs, ahs, data);
        pdu.dataDigestError(badData);
        return pdu;
    }
}
