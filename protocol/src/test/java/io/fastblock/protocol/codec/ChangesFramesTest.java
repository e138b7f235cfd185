package io.fastblock.protocol.codec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChainAddress;
import io.fastblock.protocol.ChangesRequest;
import io.fastblock.protocol.ChunkChanges;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.OpCode;
import io.fastblock.protocol.ProtocolException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.util.List;
import org.junit.jupiter.api.Test;

/** CHANGES (op 8) and its answer, the changed ranges of a chunk above a sequence. */
class ChangesFramesTest {
    @Test
    void changesRequestRoundTrips() {
        ChangesRequest in = new ChangesRequest(9, new ChainAddress(3, 4, 0), new ChunkId(5, 6), 1_700_000_000_000_000L);
        ByteBuf frame = StorageFrames.encode(in, ByteBufAllocator.DEFAULT);
        try {
            assertEquals(in, StorageFrames.decode(frame));
        } finally {
            frame.release();
        }
        assertEquals(OpCode.CHANGES, OpCode.fromCode(8));
    }

    @Test
    void aChangesBodyOfTheWrongSizeIsRefusedPrecisely() {
        ByteBuf frame = StorageFrames.encode(new ChangesRequest(1, new ChainAddress(1, 1, 0), new ChunkId(1, 0), 7),
                ByteBufAllocator.DEFAULT);
        ByteBuf longer = Unpooled.buffer().writeBytes(frame).writeByte(0);
        frame.release();
        longer.setInt(0, longer.readableBytes() - 4);
        ProtocolException e = assertThrows(ProtocolException.class, () -> StorageFrames.decode(longer));
        assertTrue(e.getMessage().contains("CHANGES body"), e.getMessage());
        longer.release();
    }

    @Test
    void chunkChangesRoundTripAndRejectGarbage() {
        ChunkChanges c = new ChunkChanges(true, List.of(new ChunkChanges.Range(0, 4096, false),
                new ChunkChanges.Range(1 << 20, 8192, true)));
        ByteBuf b = c.encode(ByteBufAllocator.DEFAULT);
        try {
            assertEquals(c, ChunkChanges.decode(b));
        } finally {
            b.release();
        }
        assertEquals(4096, c.dataBytes());
        ByteBuf bad = Unpooled.buffer().writeByte(1).writeInt(2).writeLong(0).writeInt(4096).writeByte(0);
        assertThrows(ProtocolException.class, () -> ChunkChanges.decode(bad));
        ByteBuf negative = Unpooled.buffer().writeByte(1).writeInt(1).writeLong(0).writeInt(-5).writeByte(0);
        assertThrows(ProtocolException.class, () -> ChunkChanges.decode(negative));
    }
}
