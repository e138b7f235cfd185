package io.fastblock.protocol.codec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.ChunkListRequest;
import io.fastblock.protocol.ChunkListing;
import io.fastblock.protocol.CopyReadRequest;
import io.fastblock.protocol.OpCode;
import io.fastblock.protocol.ProtocolException;
import io.fastblock.protocol.StorageMessage;
import io.fastblock.protocol.StorageResponse;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The catch-up ops (CHUNK_LIST, COPY_READ) and the chunk listing carried in CHUNK_LIST's answer. */
class CatchUpFramesTest {
    private static StorageMessage roundTrip(StorageMessage in) {
        return RoundTrip.of(in);
    }

    @Test
    void opCodesAreAppendedAfterTheFirstThree() {
        assertEquals(4, OpCode.CHUNK_LIST.code());
        assertEquals(5, OpCode.COPY_READ.code());
        assertEquals(OpCode.COPY_READ, OpCode.fromCode(5));
    }

    @Test
    void chunkListAndCopyReadRoundTrip() {
        ChunkListRequest l = new ChunkListRequest(7, new ChainAddress(3, 12, 0));
        assertEquals(l, roundTrip(l));
        CopyReadRequest c = new CopyReadRequest(8, new ChainAddress(3, 12, 0), new ChunkId(4, 5), 1 << 20, 65536);
        assertEquals(c, roundTrip(c));
    }

    @Test
    void chunkListNamesTheJoiningNodeThatAsks() {
        ChunkListRequest l = new ChunkListRequest(9, new ChainAddress(3, 12, 0), "storage-4");
        assertEquals(l, roundTrip(l));
        ByteBuf frame = StorageFrames.encode(l, ByteBufAllocator.DEFAULT);
        // preamble 16 + chain 20 + length byte + "storage-4"
        assertEquals(16 + 20 + 1 + 9, frame.readableBytes());
        frame.release();
        assertThrows(IllegalArgumentException.class, () -> new ChunkListRequest(1, new ChainAddress(1, 1, 1), ""));
        assertThrows(IllegalArgumentException.class, () -> new ChunkListRequest(1, new ChainAddress(1, 1, 1), "x".repeat(256)));
    }

    @Test
    void chunkListJoinerLengthMustMatchTheBody() {
        ByteBuf frame = StorageFrames.encode(new ChunkListRequest(1, new ChainAddress(1, 1, 1), "abc"), ByteBufAllocator.DEFAULT);
        ByteBuf shorter = Unpooled.buffer().writeBytes(frame, 0, frame.readableBytes() - 1);
        shorter.setInt(0, shorter.readableBytes() - 4);
        ProtocolException e = assertThrows(ProtocolException.class, () -> StorageFrames.decode(shorter));
        assertTrue(e.getMessage().contains("CHUNK_LIST body of 23 bytes"), e.getMessage());
        ByteBuf zero = Unpooled.buffer().writeBytes(frame, 0, 16 + 20).writeByte(0).writeByte('a');
        zero.setInt(0, zero.readableBytes() - 4);
        e = assertThrows(ProtocolException.class, () -> StorageFrames.decode(zero));
        assertTrue(e.getMessage().contains("CHUNK_LIST body of 22 bytes"), e.getMessage());
        frame.release();
        shorter.release();
        zero.release();
    }

    @Test
    void chunkListFrameIsExactlyItsBody() {
        ByteBuf frame = StorageFrames.encode(new ChunkListRequest(1, new ChainAddress(1, 1, 1)), ByteBufAllocator.DEFAULT);
        // preamble 16 + group 4 + version 8 + epoch 8
        assertEquals(16 + 20, frame.readableBytes());
        ByteBuf longer = Unpooled.buffer().writeBytes(frame).writeByte(0);
        longer.setInt(0, longer.readableBytes() - 4);
        frame.release();
        ProtocolException e = assertThrows(ProtocolException.class, () -> StorageFrames.decode(longer));
        assertTrue(e.getMessage().contains("CHUNK_LIST body of 21 bytes"), e.getMessage());
        longer.release();
    }

    @Test
    void copyReadRejectsTrailingBytesAndHugeLengths() {
        ByteBuf frame = StorageFrames.encode(new CopyReadRequest(1, new ChainAddress(1, 1, 1), new ChunkId(1, 1), 0, 10),
                ByteBufAllocator.DEFAULT);
        ByteBuf longer = Unpooled.buffer().writeBytes(frame).writeShort(0);
        longer.setInt(0, longer.readableBytes() - 4);
        frame.release();
        ProtocolException e = assertThrows(ProtocolException.class, () -> StorageFrames.decode(longer));
        assertTrue(e.getMessage().contains("2 unexpected bytes after the COPY_READ body"), e.getMessage());
        longer.release();

        ByteBuf huge = StorageFrames.encode(new CopyReadRequest(1, new ChainAddress(1, 1, 1), new ChunkId(1, 1), 0,
                StorageFrames.MAX_DATA + 1), ByteBufAllocator.DEFAULT);
        assertThrows(ProtocolException.class, () -> StorageFrames.decode(huge));
        huge.release();
    }

    @Test
    void listingRoundTripsInAResponse() {
        ChunkListing listing = new ChunkListing(List.of(new ChunkListing.Entry(new ChunkId(1, 0), 4096),
                new ChunkListing.Entry(new ChunkId(1, 7), 0), new ChunkListing.Entry(new ChunkId(9, 3), 1L << 30)));
        StorageResponse r = StorageResponse.ok(3, OpCode.CHUNK_LIST, listing.encode(ByteBufAllocator.DEFAULT));
        StorageResponse back = (StorageResponse) roundTrip(r);
        assertEquals(OpCode.CHUNK_LIST, back.op());
        assertEquals(listing, ChunkListing.decode(back.data()));
        back.data().release();
        assertEquals(new ChunkListing(List.of()), ChunkListing.decode(new ChunkListing(List.of()).encode(ByteBufAllocator.DEFAULT)));
    }

    @Test
    void malformedListingsArePreciseErrors() {
        ByteBuf shortCount = Unpooled.buffer().writeShort(1);
        assertTrue(assertThrows(ProtocolException.class, () -> ChunkListing.decode(shortCount)).getMessage().contains("no count"));
        ByteBuf mismatch = Unpooled.buffer().writeInt(2).writeLong(1).writeLong(1).writeLong(1);
        assertTrue(assertThrows(ProtocolException.class, () -> ChunkListing.decode(mismatch)).getMessage()
                .contains("says 2 entries but 24 bytes follow"));
        ByteBuf negative = Unpooled.buffer().writeInt(1).writeLong(1).writeLong(1).writeLong(-5);
        assertTrue(assertThrows(ProtocolException.class, () -> ChunkListing.decode(negative)).getMessage()
                .contains("negative length"));
    }
}
