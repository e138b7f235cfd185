package io.fastblock.protocol.codec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.ExtentsRequest;
import io.fastblock.protocol.FenceRequest;
import io.fastblock.protocol.OpCode;
import io.fastblock.protocol.ProtocolException;
import io.fastblock.protocol.ReadRequest;
import io.fastblock.protocol.StorageMessage;
import io.fastblock.protocol.WriteRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

/** TRIM, EXTENTS, READ with extents and FENCE frames (contract A). */
class StorageOpsFramesTest {
    private static final ChainAddress CHAIN = new ChainAddress(7, 3, 11);
    private static final ChunkId CHUNK = new ChunkId(5, 9);

    private static StorageMessage roundTrip(StorageMessage in) {
        return RoundTrip.of(in);
    }

    private static ByteBuf copyOf(StorageMessage m) {
        ByteBuf f = StorageFrames.encode(m, ByteBufAllocator.DEFAULT);
        ByteBuf copy = Unpooled.copiedBuffer(f);
        f.release();
        return copy;
    }

    private static String rejection(ByteBuf frame) {
        try {
            return assertThrows(ProtocolException.class, () -> StorageFrames.decode(frame)).getMessage();
        } finally {
            frame.release();
        }
    }

    @Test
    void trimRoundTripsWithItsRangeLengthAndNoData() {
        WriteRequest t = WriteRequest.trim(42, CHAIN, CHUNK, 8192, 1 << 20);
        assertTrue(t.isTrim());
        assertEquals(1 << 20, t.length());
        ByteBuf frame = StorageFrames.encode(t, ByteBufAllocator.DEFAULT);
        // the header only: no data bytes for the range
        assertEquals(StorageFrames.PREAMBLE + 4 + 8 + 8 + 8 + 8 + 8 + 8 + 4, frame.readableBytes());
        frame.release();

        WriteRequest back = assertInstanceOf(WriteRequest.class, roundTrip(t));
        assertTrue(back.isTrim());
        assertFalse(back.forwarded());
        assertEquals(1 << 20, back.length());
        assertEquals(0, back.data().readableBytes());
        assertEquals(8192, back.offset());
        assertEquals(CHUNK, back.chunk());
        assertEquals(CHAIN, back.chain());

        WriteRequest fwd = assertInstanceOf(WriteRequest.class, roundTrip(t.forward(5, 99, Unpooled.EMPTY_BUFFER)));
        assertTrue(fwd.isTrim());
        assertTrue(fwd.forwarded());
        assertEquals(99, fwd.sequence());
        assertEquals(1 << 20, fwd.length());
    }

    @Test
    void trimWithDataBytesIsRejected() {
        // a write of 16 bytes whose flags are then switched to TRIM: 16 bytes follow a trim header
        ByteBuf frame = copyOf(new WriteRequest(1, 0, CHAIN, CHUNK, 0, 0, Unpooled.wrappedBuffer(new byte[16])));
        frame.setByte(7, WriteRequest.FLAG_TRIM);
        assertTrue(rejection(frame).contains("trim carries no data"));

        assertThrows(IllegalArgumentException.class, () -> new WriteRequest(1, WriteRequest.FLAG_TRIM, CHAIN, CHUNK, 0, 0,
                Unpooled.wrappedBuffer(new byte[1]), 4096));
        assertThrows(IllegalArgumentException.class, () -> new WriteRequest(1, 0, CHAIN, CHUNK, 0, 0,
                Unpooled.EMPTY_BUFFER, 4096));
    }

    @Test
    void negativeTrimLengthIsRejected() {
        ByteBuf frame = copyOf(WriteRequest.trim(1, CHAIN, CHUNK, 0, 4096));
        frame.setInt(frame.writerIndex() - 4, -4096);
        assertTrue(rejection(frame).contains("negative trim length"));
    }

    @Test
    void extentsRequestRoundTripsAndInsistsOnAnExactBody() {
        ExtentsRequest e = new ExtentsRequest(3, CHAIN, CHUNK, 4096, 65536);
        assertEquals(e, roundTrip(e));
        assertEquals(OpCode.EXTENTS, e.op());

        ByteBuf tooLong = Unpooled.buffer();
        ByteBuf f = StorageFrames.encode(e, ByteBufAllocator.DEFAULT);
        tooLong.writeBytes(f);
        f.release();
        tooLong.writeByte(1);
        tooLong.setInt(0, tooLong.readableBytes() - 4);
        assertTrue(rejection(tooLong).contains("unexpected bytes"));

        ByteBuf negative = copyOf(e);
        negative.setInt(negative.writerIndex() - 4, -1);
        assertTrue(rejection(negative).contains("extents length -1"));

        ByteBuf huge = copyOf(e);
        huge.setInt(huge.writerIndex() - 4, StorageFrames.MAX_EXTENTS_SPAN + 1);
        assertTrue(rejection(huge).contains("outside"));
    }

    @Test
    void extentsOfAWhole64MiBChunkIsAValidQuery() {
        // GET LBA STATUS over a 64 MiB chunk: once refused as longer than a data frame, which closed
        // the gateway's connection and failed the writes in flight on it.
        ExtentsRequest whole = new ExtentsRequest(5, CHAIN, CHUNK, 0, 64 << 20);
        assertEquals(whole, roundTrip(whole));
    }

    @Test
    void readWithExtentsKeepsItsFlagAndPlainReadsHaveNone() {
        ReadRequest r = ReadRequest.withExtents(4, CHAIN, CHUNK, 0, 8192);
        ReadRequest back = assertInstanceOf(ReadRequest.class, roundTrip(r));
        assertTrue(back.wantsExtents());
        assertEquals(r, back);
        ReadRequest plain = assertInstanceOf(ReadRequest.class, roundTrip(new ReadRequest(5, CHAIN, CHUNK, 0, 1)));
        assertFalse(plain.wantsExtents());
        assertEquals(0, plain.flags());
    }

    @Test
    void fenceRoundTripsIncludingSeal() {
        FenceRequest f = new FenceRequest(6, 77, 12);
        assertEquals(f, roundTrip(f));
        FenceRequest seal = new FenceRequest(7, 77, FenceRequest.SEALED);
        assertEquals(seal, roundTrip(seal));
        ByteBuf frame = StorageFrames.encode(f, ByteBufAllocator.DEFAULT);
        assertEquals(StorageFrames.PREAMBLE + 16, frame.readableBytes());
        frame.release();
    }

    @Test
    void malformedFencesAreRejected() {
        ByteBuf shortBody = copyOf(new FenceRequest(1, 2, 3));
        shortBody.writerIndex(shortBody.writerIndex() - 1);
        shortBody.setInt(0, shortBody.readableBytes() - 4);
        assertTrue(rejection(shortBody).contains("FENCE body of 15 bytes"));

        ByteBuf negativeEpoch = copyOf(new FenceRequest(1, 2, 3));
        negativeEpoch.setLong(negativeEpoch.writerIndex() - 8, -1);
        assertTrue(rejection(negativeEpoch).contains("epoch -1"));

        ByteBuf negativeVolume = copyOf(new FenceRequest(1, 2, 3));
        negativeVolume.setLong(negativeVolume.writerIndex() - 16, -5);
        assertTrue(rejection(negativeVolume).contains("volume -5"));
    }

    @Test
    void unknownOpCodesAreRejected() {
        ByteBuf frame = copyOf(new FenceRequest(1, 2, 3));
        frame.setByte(6, 10); // 9 is ANSWER_TO
        assertTrue(rejection(frame).contains("unknown op code 10"));
    }
}
