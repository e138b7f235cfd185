package io.fastblock.protocol.codec;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.OpCode;
import io.fastblock.protocol.PingRequest;
import io.fastblock.protocol.ProtocolException;
import io.fastblock.protocol.ReadRequest;
import io.fastblock.protocol.Status;
import io.fastblock.protocol.StorageMessage;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.WriteRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class StorageFramesTest {
    private final ByteBufAllocator alloc = ByteBufAllocator.DEFAULT;

    private static StorageMessage roundTrip(StorageMessage in) {
        return RoundTrip.of(in);
    }

    @Test
    void writeRoundTripsEveryField() {
        byte[] payload = "hello chain".getBytes(StandardCharsets.US_ASCII);
        WriteRequest w = new WriteRequest(42, WriteRequest.FLAG_FORWARDED, new ChainAddress(7, 3, 11),
                new ChunkId(5, 9), 4096, 77, Unpooled.wrappedBuffer(payload));
        WriteRequest back = assertInstanceOf(WriteRequest.class, roundTrip(w));
        assertEquals(42, back.requestId());
        assertTrue(back.forwarded());
        assertEquals(new ChainAddress(7, 3, 11), back.chain());
        assertEquals(new ChunkId(5, 9), back.chunk());
        assertEquals(4096, back.offset());
        assertEquals(77, back.sequence());
        assertArrayEquals(payload, ByteBufUtil.getBytes(back.data()));
        back.data().release();
    }

    @Test
    void readAndPingRoundTrip() {
        ReadRequest r = new ReadRequest(1, new ChainAddress(2, 3, 4), new ChunkId(1, 2), 512, 8192);
        assertEquals(r, roundTrip(r));
        assertEquals(new PingRequest(9), roundTrip(new PingRequest(9)));
    }

    @Test
    void responseCarriesStatusMessageAndData() {
        StorageResponse err = StorageResponse.error(3, OpCode.WRITE, Status.STALE_CHAIN, "version 2 < 3");
        StorageResponse back = assertInstanceOf(StorageResponse.class, roundTrip(err));
        assertEquals(Status.STALE_CHAIN, back.status());
        assertEquals("version 2 < 3", back.message());
        assertEquals(OpCode.WRITE, back.op());

        StorageResponse data = StorageResponse.ok(4, OpCode.READ, Unpooled.wrappedBuffer(new byte[] {1, 2, 3}));
        StorageResponse back2 = assertInstanceOf(StorageResponse.class, roundTrip(data));
        assertArrayEquals(new byte[] {1, 2, 3}, ByteBufUtil.getBytes(back2.data()));
        back2.data().release();
    }

    @Test
    void decoderSplitsAStreamFedByteByByte() {
        EmbeddedChannel ch = new EmbeddedChannel(new StorageFrameDecoder());
        ByteBuf a = StorageFrames.encode(new PingRequest(1), alloc);
        ByteBuf b = StorageFrames.encode(new ReadRequest(2, new ChainAddress(1, 1, 0), new ChunkId(0, 0), 0, 512), alloc);
        ByteBuf both = Unpooled.wrappedBuffer(a, b);
        while (both.isReadable()) {
            ch.writeInbound(both.readRetainedSlice(1));
        }
        both.release();
        assertEquals(new PingRequest(1), ch.readInbound());
        assertInstanceOf(ReadRequest.class, ch.readInbound());
        ch.finishAndReleaseAll();
    }

    @Test
    void largeFramesArrivingInSocketSizedPiecesDecodeWholeWithFramesAroundThem() {
        // A 1 MiB read answer between two small frames, fed 64 KiB (and odd-sized) pieces at a time:
        // the cumulator makes room for the whole frame once its length is known.
        byte[] big = new byte[1 << 20];
        new java.util.Random(7).nextBytes(big);
        for (int piece : new int[] {65536, 65536 + 13, 3}) {
            EmbeddedChannel ch = new EmbeddedChannel(new StorageFrameDecoder());
            ByteBuf stream = Unpooled.wrappedBuffer(StorageFrames.encode(new PingRequest(1), alloc),
                    StorageFrames.encode(StorageResponse.ok(2, OpCode.READ, Unpooled.wrappedBuffer(big)), alloc),
                    StorageFrames.encode(new PingRequest(3), alloc));
            while (stream.isReadable()) {
                ByteBuf part = alloc.directBuffer(piece);
                part.writeBytes(stream, Math.min(piece, stream.readableBytes()));
                ch.writeInbound(part);
            }
            stream.release();
            assertEquals(new PingRequest(1), ch.readInbound());
            StorageResponse r = assertInstanceOf(StorageResponse.class, ch.readInbound());
            assertArrayEquals(big, ByteBufUtil.getBytes(r.data()), "piece " + piece);
            r.data().release();
            assertEquals(new PingRequest(3), ch.readInbound());
            assertEquals(null, (Object) ch.readInbound());
            ch.finishAndReleaseAll();
        }
    }

    @Test
    void gatheringDecoderPassesLargePayloadsOnAsTheReadBuffersAndReleasesEachOfThem() {
        byte[] big = new byte[1 << 20];
        new java.util.Random(8).nextBytes(big);
        byte[] big2 = java.util.Arrays.copyOf(big, 300_000);
        // 64 KiB pieces (a socket's reads), odd ones (frames straddle pieces), and 1000-byte ones
        // (more pieces than a composite keeps: it consolidates, which must not lose or leak anything).
        for (int piece : new int[] {65536, 65536 + 13, 1000}) {
            EmbeddedChannel ch = new EmbeddedChannel(StorageFrameDecoder.gathering());
            ByteBuf stream = Unpooled.wrappedBuffer(StorageFrames.encode(new PingRequest(1), alloc),
                    StorageFrames.encode(StorageResponse.ok(2, OpCode.READ, Unpooled.wrappedBuffer(big)), alloc),
                    StorageFrames.encode(new PingRequest(3), alloc),
                    StorageFrames.encode(StorageResponse.ok(4, OpCode.READ, Unpooled.wrappedBuffer(big2)), alloc),
                    StorageFrames.encode(StorageResponse.ok(5, OpCode.READ, Unpooled.wrappedBuffer(new byte[] {9})),
                            alloc));
            java.util.List<ByteBuf> pieces = new java.util.ArrayList<>();
            while (stream.isReadable()) {
                ByteBuf part = alloc.directBuffer(piece);
                part.writeBytes(stream, Math.min(piece, stream.readableBytes()));
                pieces.add(part);
                ch.writeInbound(part);
            }
            stream.release();
            assertEquals(new PingRequest(1), ch.readInbound());
            StorageResponse r = assertInstanceOf(StorageResponse.class, ch.readInbound());
            assertArrayEquals(big, ByteBufUtil.getBytes(r.data()), "piece " + piece);
            if (piece == 65536) {
                assertTrue(r.data().nioBufferCount() > 1, "the payload is the read buffers, not a copy");
            }
            assertEquals(new PingRequest(3), ch.readInbound());
            StorageResponse r2 = assertInstanceOf(StorageResponse.class, ch.readInbound());
            assertArrayEquals(big2, ByteBufUtil.getBytes(r2.data()), "piece " + piece);
            StorageResponse r3 = assertInstanceOf(StorageResponse.class, ch.readInbound());
            assertArrayEquals(new byte[] {9}, ByteBufUtil.getBytes(r3.data()));
            assertEquals(null, (Object) ch.readInbound());
            assertTrue(!ch.finish());
            // Payloads still held: the read buffers they cover must still be alive.
            assertTrue(pieces.stream().anyMatch(b -> b.refCnt() > 0), "piece " + piece);
            r.data().release();
            r2.data().release();
            r3.data().release();
            for (int i = 0; i < pieces.size(); i++) {
                assertEquals(0, pieces.get(i).refCnt(), "piece " + piece + " #" + i + " released once, by its last user");
            }
        }
    }

    @Test
    void rejectsBadMagicTruncationAndLyingDataLength() {
        ByteBuf frame = StorageFrames.encode(new PingRequest(1), alloc);
        frame.setByte(4, 0x00);
        assertThrows(ProtocolException.class, () -> StorageFrames.decode(frame));
        frame.release();

        ByteBuf w = StorageFrames.encode(new WriteRequest(1, 0, new ChainAddress(1, 1, 0), new ChunkId(0, 0), 0, 0,
                Unpooled.wrappedBuffer(new byte[16])), alloc);
        ByteBuf copy = Unpooled.copiedBuffer(w);
        w.release();
        // claim 17 data bytes where 16 follow
        copy.setInt(copy.writerIndex() - 16 - 4, 17);
        ProtocolException e = assertThrows(ProtocolException.class, () -> StorageFrames.decode(copy));
        assertTrue(e.getMessage().contains("data length"), e.getMessage());
        copy.release();

        ByteBuf r = StorageFrames.encode(new ReadRequest(1, new ChainAddress(1, 1, 0), new ChunkId(0, 0), 0, 1), alloc);
        ByteBuf cut = Unpooled.copiedBuffer(r).capacity(r.readableBytes() - 6);
        r.release();
        cut.setInt(0, cut.readableBytes() - 4);
        assertThrows(ProtocolException.class, () -> StorageFrames.decode(cut));
        cut.release();
    }
}
