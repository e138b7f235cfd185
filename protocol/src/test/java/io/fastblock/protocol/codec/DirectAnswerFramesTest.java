package io.fastblock.protocol.codec;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.AnswerToRequest;
import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.OpCode;
import io.fastblock.protocol.ProtocolException;
import io.fastblock.protocol.StorageMessage;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.WriteRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

/** The frames of direct answers: a write naming the client the tail answers, ANSWER_TO, and the ANSWERED flag. */
class DirectAnswerFramesTest {
    private static StorageMessage roundTrip(StorageMessage in) {
        return RoundTrip.of(in);
    }

    private static WriteRequest write(byte[] payload) {
        return new WriteRequest(42, 0, new ChainAddress(7, 3, 11), new ChunkId(5, 9), 4096, 0, Unpooled.wrappedBuffer(payload));
    }

    @Test
    void aWriteKeepsItsAnswerFieldsThroughTheCodecAndForwarding() {
        byte[] payload = "direct".getBytes();
        WriteRequest w = write(payload).answeredDirectlyTo(0x1234_5678_9abcL, 42);
        WriteRequest back = assertInstanceOf(WriteRequest.class, roundTrip(w));
        assertTrue(back.answerDirect());
        assertEquals(0x1234_5678_9abcL, back.answerTo());
        assertEquals(42, back.answerId());
        assertArrayEquals(payload, ByteBufUtil.getBytes(back.data()));
        WriteRequest forwarded = assertInstanceOf(WriteRequest.class, roundTrip(back.forward(900, 77, back.data())));
        assertTrue(forwarded.forwarded());
        assertEquals(900, forwarded.requestId());
        assertEquals(0x1234_5678_9abcL, forwarded.answerTo());
        assertEquals(42, forwarded.answerId(), "the client's id travels unchanged down the chain");
        assertArrayEquals(payload, ByteBufUtil.getBytes(forwarded.data()));
        forwarded.data().release();
    }

    @Test
    void aTrimCarriesThemToo() {
        WriteRequest t = WriteRequest.trim(5, new ChainAddress(1, 1, 1), new ChunkId(1, 1), 8192, 4096).answeredDirectlyTo(9, 5);
        WriteRequest back = assertInstanceOf(WriteRequest.class, roundTrip(t));
        assertTrue(back.isTrim());
        assertEquals(4096, back.length());
        assertEquals(9, back.answerTo());
        assertEquals(5, back.answerId());
    }

    @Test
    void aPlainWriteHasNone() {
        WriteRequest back = assertInstanceOf(WriteRequest.class, roundTrip(write(new byte[] {1})));
        assertFalse(back.answerDirect());
        assertEquals(0, back.answerTo());
        back.data().release();
    }

    @Test
    void theFlagAndTheClientIdGoTogether() {
        assertThrows(IllegalArgumentException.class, () -> new WriteRequest(1, WriteRequest.FLAG_ANSWER_DIRECT,
                new ChainAddress(1, 1, 1), new ChunkId(1, 1), 0, 0, Unpooled.EMPTY_BUFFER, 0, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> new WriteRequest(1, 0,
                new ChainAddress(1, 1, 1), new ChunkId(1, 1), 0, 0, Unpooled.EMPTY_BUFFER, 0, 7, 1));
        assertThrows(IllegalArgumentException.class, () -> new AnswerToRequest(1, 0));
    }

    @Test
    void aFrameNamingClientZeroIsRefused() {
        ByteBuf frame = StorageFrames.encode(write(new byte[] {1, 2}).answeredDirectlyTo(3, 4), ByteBufAllocator.DEFAULT);
        try {
            // answerTo sits right after the length field: preamble + chain and chunk + offset + sequence + length.
            frame.setLong(StorageFrames.PREAMBLE + 36 + 8 + 8 + 4, 0);
            ProtocolException e = assertThrows(ProtocolException.class, () -> StorageFrames.decode(frame));
            assertTrue(e.getMessage().contains("client 0"), e.getMessage());
        } finally {
            frame.release();
        }
    }

    @Test
    void answerToRoundTripsAndInsistsOnItsBody() {
        assertEquals(new AnswerToRequest(3, -17), roundTrip(new AnswerToRequest(3, -17)));
        ByteBuf frame = Unpooled.buffer();
        frame.writeInt(0).writeByte(StorageFrames.MAGIC).writeByte(StorageFrames.VERSION).writeByte(OpCode.ANSWER_TO.code())
                .writeByte(0).writeLong(1).writeInt(5);
        frame.setInt(0, frame.readableBytes() - 4);
        ProtocolException e = assertThrows(ProtocolException.class, () -> StorageFrames.decode(frame));
        assertTrue(e.getMessage().contains("ANSWER_TO body of 4 bytes"), e.getMessage());
    }

    @Test
    void theAnsweredFlagRoundTripsOnResponses() {
        StorageResponse ok = StorageResponse.ok(8, OpCode.WRITE);
        assertFalse(assertInstanceOf(StorageResponse.class, roundTrip(ok)).answered());
        StorageResponse back = assertInstanceOf(StorageResponse.class, roundTrip(ok.withAnswered()));
        assertTrue(back.answered());
        assertTrue(back.isOk());
        assertEquals(8, back.requestId());
    }
}
