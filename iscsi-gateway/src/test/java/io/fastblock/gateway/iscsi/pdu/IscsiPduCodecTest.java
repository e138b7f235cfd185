package io.fastblock.gateway.iscsi.pdu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class IscsiPduCodecTest {
    private static final ByteBufAllocator ALLOC = ByteBufAllocator.DEFAULT;

    /** Wire form of a PDU as an initiator would send it. */
    private static ByteBuf wire(int byte0, int flags, int dataLen, byte[] data, int ahsWords) {
        ByteBuf b = Unpooled.buffer();
        b.writeByte(byte0).writeByte(flags).writeShort(0);
        b.writeByte(ahsWords).writeMedium(dataLen);
        b.writeLong(0x0001000000000000L); // LUN 1
        b.writeInt(0x11223344); // ITT
        b.writeInt(4096); // EDTL
        b.writeInt(7); // CmdSN
        b.writeInt(9); // ExpStatSN
        b.writeZero(16); // CDB
        b.writeZero(ahsWords * 4);
        b.writeBytes(data);
        b.writeZero(-data.length & 3);
        return b;
    }

    @Test
    void decodesHeaderFieldsAndDataWithoutPadding() {
        byte[] data = "hello".getBytes(StandardCharsets.US_ASCII);
        ByteBuf in = wire(0x41, 0xA0, 5, data, 0);
        IscsiPdu pdu = new IscsiPduDecoder(8192).decodeOne(in);
        assertEquals(Opcode.SCSI_COMMAND, pdu.opcode());
        assertTrue(pdu.immediate());
        assertTrue(pdu.finalBit());
        assertEquals(0xA0, pdu.flags());
        assertEquals(0x0001000000000000L, pdu.lun());
        assertEquals(0x11223344, pdu.itt());
        assertEquals(4096, pdu.int20());
        assertEquals(7, pdu.cmdSN());
        assertEquals(9, pdu.expStatSN());
        assertEquals("hello", pdu.data().toString(StandardCharsets.US_ASCII));
        assertEquals(0, in.readableBytes(), "padding consumed");
        pdu.release();
        in.release();
    }

    @Test
    void waitsForTheWholePdu() {
        ByteBuf full = wire(0x01, 0x80, 10, new byte[10], 0);
        ByteBuf part = full.copy(0, full.readableBytes() - 1);
        IscsiPduDecoder dec = new IscsiPduDecoder(8192);
        assertNull(dec.decodeOne(part));
        assertEquals(0, part.readerIndex(), "nothing consumed");
        assertNull(dec.decodeOne(Unpooled.wrappedBuffer(new byte[47])));
        full.release();
        part.release();
    }

    @Test
    void skipsAhs() {
        ByteBuf in = wire(0x01, 0x80, 3, new byte[] {1, 2, 3}, 2);
        IscsiPdu pdu = new IscsiPduDecoder(8192).decodeOne(in);
        assertEquals(2, pdu.totalAhsLength());
        assertEquals(8, pdu.ahs().readableBytes());
        assertEquals(3, pdu.data().readableBytes());
        assertEquals(0, in.readableBytes());
        pdu.release();
    }

    @Test
    void rejectsDataSegmentBeyondOurLimit() {
        ByteBuf in = wire(0x01, 0x80, 8193, new byte[0], 0);
        IscsiProtocolException e = assertThrows(IscsiProtocolException.class,
                () -> new IscsiPduDecoder(8192).decodeOne(in));
        assertTrue(e.getMessage().contains("8193"), e.getMessage());
    }

    @Test
    void rejectsTargetOpcodesAndReservedBit() {
        assertThrows(IscsiProtocolException.class,
                () -> new IscsiPduDecoder(8192).decodeOne(wire(0x21, 0x80, 0, new byte[0], 0)));
        assertThrows(IscsiProtocolException.class,
                () -> new IscsiPduDecoder(8192).decodeOne(wire(0x81, 0x80, 0, new byte[0], 0)));
        assertThrows(IscsiProtocolException.class,
                () -> new IscsiPduDecoder(8192).decodeOne(wire(0x3f, 0x80, 0, new byte[0], 0)));
    }

    @Test
    void garbageClosesTheConnection() {
        EmbeddedChannel ch = new EmbeddedChannel(new IscsiPduDecoder(8192));
        byte[] junk = new byte[64];
        java.util.Arrays.fill(junk, (byte) 0xff);
        ch.writeInbound(Unpooled.wrappedBuffer(junk));
        assertFalse(ch.isOpen());
        assertNull(ch.readInbound());
    }

    @Test
    void encoderRoundTripsThroughTheDecoder() {
        IscsiPdu pdu = IscsiPdu.create(ALLOC, Opcode.SCSI_DATA_IN);
        pdu.flags(0x81).byteAt(3, 0).itt(5).int20(-1).sequence(10, 20, 30).int36(2).int40(8192).int44(0);
        pdu.data(Unpooled.wrappedBuffer(new byte[] {9, 8, 7, 6, 5, 4, 3}));
        EmbeddedChannel ch = new EmbeddedChannel(new IscsiPduEncoder());
        ch.writeOutbound(pdu);
        ByteBuf out = Unpooled.buffer();
        for (ByteBuf b; (b = ch.readOutbound()) != null; ) {
            out.writeBytes(b);
            b.release();
        }
        assertEquals(48 + 8, out.readableBytes(), "7 data bytes + 1 padding");
        assertEquals(0, out.getByte(55), "zero padding");
        assertEquals(7, out.getMedium(5));
        // Re-decode by flipping the opcode to an initiator one (the decoder only accepts those).
        out.setByte(0, Opcode.SCSI_DATA_OUT);
        IscsiPdu back = new IscsiPduDecoder(8192).decodeOne(out);
        assertEquals(0x81, back.flags());
        assertEquals(5, back.itt());
        assertEquals(10, back.int24());
        assertEquals(20, back.int28());
        assertEquals(30, back.int32());
        assertEquals(2, back.int36());
        assertEquals(8192, back.int40());
        assertEquals("09080706050403", ByteBufUtil.hexDump(back.data()));
        back.release();
        assertEquals(0, pdu.refCnt(), "encoder released the PDU");
    }
}
