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

    /** Three PDUs (the middle one 300 KiB, like a 256 KiB+ Data-Out) fed as reads of the given sizes. */
    private static java.util.List<IscsiPdu> decodeSplit(int[] readSizes, ByteBuf stream, int maxData) {
        EmbeddedChannel ch = new EmbeddedChannel(new IscsiPduDecoder(maxData));
        int pos = 0;
        for (int i = 0; pos < stream.writerIndex(); i++) {
            int n = Math.min(readSizes[i % readSizes.length], stream.writerIndex() - pos);
            ch.writeInbound(stream.retainedSlice(pos, n));
            pos += n;
        }
        java.util.List<IscsiPdu> out = new java.util.ArrayList<>();
        for (Object o; (o = ch.readInbound()) != null; ) {
            out.add((IscsiPdu) o);
        }
        assertTrue(ch.isOpen());
        ch.finishAndReleaseAll();
        return out;
    }

    private static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + seed + (i >>> 9));
        }
        return b;
    }

    @Test
    void pdusSpanningReadsAreFramedAtEverySplit() {
        byte[] small = pattern(5, 1);
        byte[] big = pattern(300 * 1024 + 3, 2); // not a multiple of 4: padding too
        byte[] tiny = pattern(4096, 3);
        ByteBuf stream = Unpooled.buffer();
        stream.writeBytes(wire(0x41, 0xA0, small.length, small, 0));
        stream.writeBytes(wire(0x05, 0x80, big.length, big, 0));
        stream.writeBytes(wire(0x01, 0x80, tiny.length, tiny, 1));
        // Reads ending inside a header, inside data, inside padding, at PDU boundaries, one byte each.
        int[][] splits = {{1}, {7}, {47, 1, 2}, {48}, {53}, {1000}, {65536}, {65536, 13, 48}, {400 * 1024}};
        for (int[] split : splits) {
            java.util.List<IscsiPdu> pdus = decodeSplit(split, stream, 512 * 1024);
            assertEquals(3, pdus.size(), "reads of " + java.util.Arrays.toString(split));
            assertEquals(Opcode.SCSI_COMMAND, pdus.get(0).opcode());
            assertEquals(ByteBufUtil.hexDump(small), ByteBufUtil.hexDump(pdus.get(0).data()));
            assertEquals(Opcode.SCSI_DATA_OUT, pdus.get(1).opcode());
            assertTrue(java.util.Arrays.equals(big, ByteBufUtil.getBytes(pdus.get(1).data())),
                    "big data segment intact with reads of " + java.util.Arrays.toString(split));
            assertEquals(0x11223344, pdus.get(2).itt());
            assertTrue(java.util.Arrays.equals(tiny, ByteBufUtil.getBytes(pdus.get(2).data())));
            pdus.forEach(IscsiPdu::release);
        }
        assertEquals(1, stream.refCnt(), "every slice of the reads was released");
        stream.release();
    }

    @Test
    void dataSegmentsAreSlicesOfTheReadsNotCopies() {
        byte[] big = pattern(200 * 1024, 4);
        ByteBuf stream = Unpooled.directBuffer();
        stream.writeBytes(wire(0x05, 0x80, big.length, big, 0));
        EmbeddedChannel ch = new EmbeddedChannel(new IscsiPduDecoder(256 * 1024));
        int half = stream.writerIndex() / 2;
        ch.writeInbound(stream.retainedSlice(0, half));
        ch.writeInbound(stream.retainedSlice(half, stream.writerIndex() - half));
        IscsiPdu pdu = ch.readInbound();
        // Changing the received bytes shows through the PDU's data: it is the same memory.
        stream.setByte(48, big[0] + 1);
        stream.setByte(stream.writerIndex() - 1, big[big.length - 1] + 1);
        assertEquals((byte) (big[0] + 1), pdu.data().getByte(pdu.data().readerIndex()));
        assertEquals((byte) (big[big.length - 1] + 1), pdu.data().getByte(pdu.data().writerIndex() - 1));
        pdu.release();
        ch.finishAndReleaseAll();
        assertEquals(1, stream.refCnt());
        stream.release();
    }

    @Test
    void garbageAfterAPartialPduClosesTheConnectionAndReleasesIt() {
        ByteBuf stream = Unpooled.buffer();
        stream.writeBytes(wire(0x05, 0x80, 1000, new byte[1000], 0));
        EmbeddedChannel ch = new EmbeddedChannel(new IscsiPduDecoder(8192));
        ch.writeInbound(stream.retainedSlice(0, 100));
        assertTrue(ch.isOpen());
        ch.writeInbound(stream.retainedSlice(100, stream.writerIndex() - 100));
        assertTrue(ch.isOpen());
        assertTrue(ch.readInbound() instanceof IscsiPdu p && p.release());
        byte[] junk = new byte[20];
        java.util.Arrays.fill(junk, (byte) 0xff);
        ch.writeInbound(Unpooled.wrappedBuffer(junk)); // shorter than a header: kept as a partial PDU
        assertTrue(ch.isOpen());
        ch.writeInbound(Unpooled.wrappedBuffer(new byte[30]));
        assertFalse(ch.isOpen(), "a header that is no initiator PDU ends the connection");
        assertNull(ch.readInbound());
        ch.finishAndReleaseAll();
        assertEquals(1, stream.refCnt());
        stream.release();
    }
}
