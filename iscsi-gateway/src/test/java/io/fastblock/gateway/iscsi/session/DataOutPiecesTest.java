package io.fastblock.gateway.iscsi.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

class DataOutPiecesTest {
    private static final ByteBufAllocator ALLOC = ByteBufAllocator.DEFAULT;

    private static ByteBuf bytes(int from, int n) {
        ByteBuf b = Unpooled.directBuffer(n);
        for (int i = 0; i < n; i++) {
            b.writeByte(from + i);
        }
        return b;
    }

    @Test
    void onePieceIsHandedOverAsItIsWithoutCopy() {
        ByteBuf pdu = bytes(0, 4096);
        DataOutPieces d = new DataOutPieces(4096);
        d.add(0, pdu);
        ByteBuf whole = d.assemble(ALLOC);
        pdu.setByte(0, 99); // the received memory itself
        assertEquals(99, whole.getByte(whole.readerIndex()));
        assertEquals(4096, whole.readableBytes());
        whole.release();
        assertEquals(1, pdu.refCnt());
        pdu.release();
    }

    @Test
    void piecesArriveInAnyOrderAndAreJoinedByOffset() {
        ByteBuf a = bytes(0, 100);
        ByteBuf b = bytes(100, 50);
        ByteBuf c = bytes(150, 10);
        DataOutPieces d = new DataOutPieces(160);
        d.add(100, b); // a second R2T's sequence answered first
        d.add(0, a);
        d.add(150, c);
        ByteBuf whole = d.assemble(ALLOC);
        assertEquals(ByteBufUtil.hexDump(bytes(0, 160)), ByteBufUtil.hexDump(whole));
        whole.release();
        for (ByteBuf x : new ByteBuf[] {a, b, c}) {
            assertEquals(1, x.refCnt());
            x.release();
        }
    }

    @Test
    void bytesBeyondWhatTheCommandKeepsAreDropped() {
        ByteBuf a = bytes(0, 100);
        ByteBuf b = bytes(100, 100);
        DataOutPieces d = new DataOutPieces(60);
        d.add(0, a);
        d.add(100, b); // wholly beyond
        ByteBuf whole = d.assemble(ALLOC);
        assertEquals(ByteBufUtil.hexDump(bytes(0, 60)), ByteBufUtil.hexDump(whole));
        whole.release();
        a.release();
        b.release();
    }

    @Test
    void aHoleOrAShortfallIsRefusedNotFilled() {
        ByteBuf a = bytes(0, 10);
        ByteBuf c = bytes(20, 10);
        DataOutPieces gap = new DataOutPieces(30);
        gap.add(0, a);
        gap.add(20, c);
        assertThrows(IllegalStateException.class, () -> gap.assemble(ALLOC));
        gap.release();
        DataOutPieces shortfall = new DataOutPieces(30);
        shortfall.add(0, a);
        assertThrows(IllegalStateException.class, () -> shortfall.assemble(ALLOC));
        shortfall.release();
        assertEquals(1, a.refCnt(), "release gives back what the pieces held");
        assertEquals(1, c.refCnt());
        a.release();
        c.release();
    }

    @Test
    void releaseBeforeAssemblyGivesEverythingBack() {
        ByteBuf a = bytes(0, 10);
        DataOutPieces d = new DataOutPieces(10);
        d.add(0, a);
        assertEquals(2, a.refCnt());
        d.release();
        d.add(0, a); // after release (an aborted task), nothing is kept
        assertEquals(1, a.refCnt());
        a.release();
    }
}
