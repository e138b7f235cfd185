package io.fastblock.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.List;
import org.junit.jupiter.api.Test;

class ExtentsTest {
    @Test
    void builderMergesAdjacentAndOverlappingRanges() {
        Extents e = new Extents.Builder().add(0, 4096).add(4096, 4096).add(16384, 4096).add(16384, 8192)
                .add(40960, 0).build();
        assertEquals(List.of(new Extents.Range(0, 8192), new Extents.Range(16384, 8192)), e.ranges());
        assertEquals(16384, e.allocatedBytes());
        assertTrue(e.contains(0));
        assertTrue(e.contains(8191));
        assertFalse(e.contains(8192));
        assertTrue(e.contains(24575));
        assertFalse(e.contains(24576));
        assertThrows(IllegalArgumentException.class, () -> new Extents.Builder().add(8192, 4096).add(0, 4096));
    }

    @Test
    void encodeDecodeRoundTripAndLeavesTrailingDataReadable() {
        Extents e = Extents.of(List.of(new Extents.Range(4096, 4096), new Extents.Range(1L << 32, 65536)));
        ByteBuf buf = Unpooled.buffer();
        e.encode(buf);
        assertEquals(e.encodedSize(), buf.readableBytes());
        buf.writeBytes(new byte[] {9, 9});
        assertEquals(e, Extents.decode(buf));
        assertEquals(2, buf.readableBytes());
        ByteBuf none = Unpooled.buffer();
        Extents.NONE.encode(none);
        assertEquals(Extents.NONE, Extents.decode(none));
    }

    @Test
    void malformedListsAreProtocolErrors() {
        ByteBuf lying = Unpooled.buffer().writeInt(3).writeLong(0).writeInt(4096);
        assertTrue(assertThrows(ProtocolException.class, () -> Extents.decode(lying)).getMessage().contains("3 ranges"));
        ByteBuf unordered = Unpooled.buffer().writeInt(2).writeLong(8192).writeInt(4096).writeLong(0).writeInt(4096);
        assertThrows(ProtocolException.class, () -> Extents.decode(unordered));
        ByteBuf touching = Unpooled.buffer().writeInt(2).writeLong(0).writeInt(4096).writeLong(4096).writeInt(4096);
        assertThrows(ProtocolException.class, () -> Extents.decode(touching));
        ByteBuf empty = Unpooled.buffer().writeInt(1).writeLong(0).writeInt(0);
        assertThrows(ProtocolException.class, () -> Extents.decode(empty));
        ByteBuf negativeCount = Unpooled.buffer().writeInt(-1);
        assertThrows(ProtocolException.class, () -> Extents.decode(negativeCount));
        assertThrows(ProtocolException.class, () -> Extents.decode(Unpooled.buffer().writeShort(0)));
    }
}
