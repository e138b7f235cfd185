package io.fastblock.gateway.iscsi.pdu;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.util.AbstractReferenceCounted;
import io.netty.util.ReferenceCounted;

/**
 * One iSCSI PDU: the 48-byte Basic Header Segment, the Additional Header Segments and the data
 * segment (without padding or digests). Field accessors read and write the BHS in place so a PDU
 * is never copied into an object model; the data segment is usually a slice of the read buffer.
 * Releasing the PDU releases all three buffers.
 */
public final class IscsiPdu extends AbstractReferenceCounted {
    public static final int BHS_LENGTH = 48;
    public static final int NO_TAG = 0xffffffff;

    private final ByteBuf bhs;
    private final ByteBuf ahs;
    private ByteBuf data;
    private boolean dataDigestError;

    public IscsiPdu(ByteBuf bhs, ByteBuf ahs, ByteBuf data) {
        if (bhs.readableBytes() != BHS_LENGTH) {
            throw new IllegalArgumentException("BHS must be 48 bytes, got " + bhs.readableBytes());
        }
        this.bhs = bhs;
        this.ahs = ahs;
        this.data = data;
    }

    /** A zeroed PDU with {@code opcode} and the F bit set, ready for its fields to be filled in. */
    public static IscsiPdu create(ByteBufAllocator alloc, int opcode) {
        ByteBuf bhs = alloc.buffer(BHS_LENGTH, BHS_LENGTH);
        bhs.writeZero(BHS_LENGTH);
        IscsiPdu pdu = new IscsiPdu(bhs, Unpooled.EMPTY_BUFFER, Unpooled.EMPTY_BUFFER);
        pdu.bhs.setByte(0, opcode & 0x3f);
        pdu.bhs.setByte(1, 0x80);
        return pdu;
    }

    public ByteBuf bhs() {
        return bhs;
    }

    public ByteBuf ahs() {
        return ahs;
    }

    public ByteBuf data() {
        return data;
    }

    /** Replaces the data segment (taking ownership of {@code newData}) and sets DataSegmentLength. */
    public IscsiPdu data(ByteBuf newData) {
        int len = newData.readableBytes();
        if (len > 0xffffff) {
            throw new IllegalArgumentException("data segment too long: " + len);
        }
        data.release();
        data = newData;
        bhs.setMedium(5, len);
        return this;
    }

    /** True when the data segment arrived with a wrong CRC32C (the header was good). */
    public boolean dataDigestError() {
        return dataDigestError;
    }

    public void dataDigestError(boolean bad) {
        this.dataDigestError = bad;
    }

    public int opcode() {
        return bhs.getByte(0) & 0x3f;
    }

    public boolean immediate() {
        return (bhs.getByte(0) & 0x40) != 0;
    }

    public IscsiPdu immediate(boolean on) {
        bhs.setByte(0, (bhs.getByte(0) & ~0x40) | (on ? 0x40 : 0));
        return this;
    }

    public int flags() {
        return bhs.getByte(1) & 0xff;
    }

    public IscsiPdu flags(int f) {
        bhs.setByte(1, f);
        return this;
    }

    public boolean finalBit() {
        return (flags() & 0x80) != 0;
    }

    public int totalAhsLength() {
        return bhs.getByte(4) & 0xff;
    }

    public int dataSegmentLength() {
        return bhs.getUnsignedMedium(5);
    }

    public long lun() {
        return bhs.getLong(8);
    }

    public IscsiPdu lun(long lun) {
        bhs.setLong(8, lun);
        return this;
    }

    public int itt() {
        return bhs.getInt(16);
    }

    public IscsiPdu itt(int itt) {
        bhs.setInt(16, itt);
        return this;
    }

    /** Byte 20..23: TTT, EDTL or Referenced Task Tag depending on the opcode. */
    public int int20() {
        return bhs.getInt(20);
    }

    public IscsiPdu int20(int v) {
        bhs.setInt(20, v);
        return this;
    }

    public int int24() {
        return bhs.getInt(24);
    }

    public IscsiPdu int24(int v) {
        bhs.setInt(24, v);
        return this;
    }

    public int int28() {
        return bhs.getInt(28);
    }

    public IscsiPdu int28(int v) {
        bhs.setInt(28, v);
        return this;
    }

    public int int32() {
        return bhs.getInt(32);
    }

    public IscsiPdu int32(int v) {
        bhs.setInt(32, v);
        return this;
    }

    public int int36() {
        return bhs.getInt(36);
    }

    public IscsiPdu int36(int v) {
        bhs.setInt(36, v);
        return this;
    }

    public int int40() {
        return bhs.getInt(40);
    }

    public IscsiPdu int40(int v) {
        bhs.setInt(40, v);
        return this;
    }

    public int int44() {
        return bhs.getInt(44);
    }

    public IscsiPdu int44(int v) {
        bhs.setInt(44, v);
        return this;
    }

    public IscsiPdu byteAt(int index, int v) {
        bhs.setByte(index, v);
        return this;
    }

    public int byteAt(int index) {
        return bhs.getByte(index) & 0xff;
    }

    // Names for the fields every request carries.
    public int cmdSN() {
        return int24();
    }

    public int expStatSN() {
        return int28();
    }

    /** Sets StatSN, ExpCmdSN and MaxCmdSN (bytes 24..35), present in every target PDU. */
    public IscsiPdu sequence(int statSN, int expCmdSN, int maxCmdSN) {
        bhs.setInt(24, statSN);
        bhs.setInt(28, expCmdSN);
        bhs.setInt(32, maxCmdSN);
        return this;
    }

    @Override
    protected void deallocate() {
        bhs.release();
        ahs.release();
        data.release();
    }

    @Override
    public ReferenceCounted touch(Object hint) {
        return this;
    }

    @Override
    public String toString() {
        return String.format("IscsiPdu[op=0x%02x%s flags=0x%02x itt=0x%08x len=%d]", opcode(),
                immediate() ? " I" : "", flags(), itt(), dataSegmentLength());
    }
}
