package io.fastblock.gateway.iscsi.pdu;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Frames the inbound byte stream into {@link IscsiPdu}s without copying payload bytes. A PDU that
 * lies whole in one socket read is cut out of it as retained slices. A PDU that spans reads (every
 * 256 KiB Data-Out does) is gathered as retained slices of those reads in a composite buffer, taking
 * from each read only the bytes that PDU needs; what follows in the read is framed from the read
 * itself. (A cumulating decoder copies every byte of such a PDU into its cumulation buffer, and
 * again when that buffer grows or is shared with a slice still held.) A PDU that cannot be framed
 * (unknown opcode, data segment beyond our MaxRecvDataSegmentLength, header digest error) closes
 * the connection: at that point the stream has lost its framing and nothing after it can be trusted.
 */
public final class IscsiPduDecoder extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(IscsiPduDecoder.class);

    private final int maxDataSegmentLength;
    private boolean headerDigest;
    private boolean dataDigest;
    /** The beginning of a PDU that earlier reads ended in the middle of; null at a PDU boundary. */
    private CompositeByteBuf partial;
    /** The framing was lost: the connection is closing, later bytes are dropped. */
    private boolean failed;

    public IscsiPduDecoder(int maxDataSegmentLength) {
        this.maxDataSegmentLength = maxDataSegmentLength;
    }

    /** Turns CRC32C digests on after the login phase (never on Login PDUs). */
    public void digests(boolean header, boolean data) {
        this.headerDigest = header;
        this.dataDigest = data;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ByteBuf in)) {
            ctx.fireChannelRead(msg);
            return;
        }
        try {
            if (failed) {
                return;
            }
            if (partial != null && !completePartial(ctx, in)) {
                return;
            }
            while (in.isReadable() && !failed) {
                int total = frameLength(in);
                if (total < 0 || in.readableBytes() < total) {
                    partial = ctx.alloc().compositeBuffer(Integer.MAX_VALUE);
                    partial.addComponent(true, in.readRetainedSlice(in.readableBytes()));
                    return;
                }
                ctx.fireChannelRead(decodeFrame(in, total));
            }
        } catch (IscsiProtocolException e) {
            fail(ctx, e);
        } finally {
            in.release();
        }
    }

    /**
     * Adds to {@link #partial} the bytes of {@code in} that finish its PDU, and passes the PDU on.
     * False when {@code in} ended before the PDU did.
     */
    private boolean completePartial(ChannelHandlerContext ctx, ByteBuf in) {
        while (true) {
            int total = frameLength(partial);
            int need = (total < 0 ? IscsiPdu.BHS_LENGTH : total) - partial.readableBytes();
            int take = Math.min(need, in.readableBytes());
            if (take > 0) {
                partial.addComponent(true, in.readRetainedSlice(take));
            }
            if (take < need) {
                return false;
            }
            if (total >= 0) {
                CompositeByteBuf whole = partial;
                partial = null;
                try {
                    ctx.fireChannelRead(decodeFrame(whole, total));
                } finally {
                    whole.release(); // the PDU holds its own retained slices
                }
                return true;
            }
            // The basic header is complete now: its lengths say how much more this PDU needs.
        }
    }

    private void fail(ChannelHandlerContext ctx, IscsiProtocolException e) {
        LOG.warn("closing {}: {}", ctx.channel().remoteAddress(), e.getMessage());
        failed = true;
        releasePartial();
        ctx.close();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        releasePartial();
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        releasePartial();
    }

    private void releasePartial() {
        if (partial != null) {
            partial.release();
            partial = null;
        }
    }

    /** Decodes one PDU from {@code in} or returns null when more bytes are needed. */
    public IscsiPdu decodeOne(ByteBuf in) {
        int total = frameLength(in);
        if (total < 0 || in.readableBytes() < total) {
            return null;
        }
        return decodeFrame(in, total);
    }

    /**
     * The whole length on the wire of the PDU starting at {@code in}'s reader index (digests and
     * padding included), or -1 while its basic header is incomplete.
     *
     * @throws IscsiProtocolException when the header cannot start an initiator PDU we accept
     */
    private int frameLength(ByteBuf in) {
        if (in.readableBytes() < IscsiPdu.BHS_LENGTH) {
            return -1;
        }
        int start = in.readerIndex();
        int byte0 = in.getByte(start) & 0xff;
        int op = byte0 & 0x3f;
        if ((byte0 & 0x80) != 0 || !Opcode.isInitiatorOpcode(op)) {
            throw new IscsiProtocolException(String.format("not an initiator PDU: byte0=0x%02x", byte0));
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
        return IscsiPdu.BHS_LENGTH + ahsLen + hd + padded + dd;
    }

    /** Cuts the PDU of {@code total} bytes (all readable in {@code in}) out of {@code in}. */
    private IscsiPdu decodeFrame(ByteBuf in, int total) {
        int start = in.readerIndex();
        int op = in.getByte(start) & 0x3f;
        int ahsLen = (in.getByte(start + 4) & 0xff) * 4;
        int dataLen = in.getUnsignedMedium(start + 5);
        int padded = (dataLen + 3) & ~3;
        int hd = headerDigest ? 4 : 0;
        int dd = dataDigest && dataLen > 0 ? 4 : 0;
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
        assert in.readerIndex() - start == total;
        IscsiPdu pdu = new IscsiPdu(bhs, ahs, data);
        pdu.dataDigestError(badData);
        return pdu;
    }
}
