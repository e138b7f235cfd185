package io.fastblock.gateway.iscsi.session;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The data-out of one SCSI command as it arrives (immediate, unsolicited, solicited): retained
 * slices of the received PDUs' data segments, by offset, instead of a copy into a buffer of the
 * command's size. Once all of it is in, {@link #assemble} hands the bytes to the SCSI layer as
 * one buffer: the single piece itself (a 4 KiB write with immediate data), or a composite over the
 * pieces in offset order, which the storage request then sends as they are (one write vector
 * each). The iSCSI layer checks offsets (every sequence in order, no overlap, no gap); this class
 * checks again that the pieces tile {@code [0, length)} before handing them out. Event loop only.
 */
final class DataOutPieces {
    private record Piece(long offset, ByteBuf data) {
    }

    private final int length;
    private final List<Piece> pieces = new ArrayList<>(1);
    private boolean released;

    /** @param length the bytes the command keeps; data beyond them is received and dropped */
    DataOutPieces(int length) {
        this.length = length;
    }

    int length() {
        return length;
    }

    /** Keeps the part of {@code data} (a PDU's data segment at {@code offset}) below {@link #length()}. */
    void add(long offset, ByteBuf data) {
        if (released || offset >= length || !data.isReadable()) {
            return;
        }
        int n = (int) Math.min(data.readableBytes(), length - offset);
        pieces.add(new Piece(offset, data.retainedSlice(data.readerIndex(), n)));
    }

    /**
     * The whole data-out as one buffer the caller owns (release it once), the pieces handed over;
     * empty afterwards.
     *
     * @throws IllegalStateException when the pieces do not tile {@code [0, length)} (a bug of the
     *         caller's sequence checks: never write what the initiator did not send)
     */
    ByteBuf assemble(ByteBufAllocator alloc) {
        if (pieces.size() > 1) {
            pieces.sort(Comparator.comparingLong(Piece::offset));
        }
        long expected = 0;
        for (Piece p : pieces) {
            if (p.offset() != expected) {
                throw new IllegalStateException("data-out piece at " + p.offset() + ", expected " + expected);
            }
            expected += p.data().readableBytes();
        }
        if (expected != length) {
            throw new IllegalStateException("data-out has " + expected + " of " + length + " bytes");
        }
        ByteBuf whole;
        if (pieces.size() == 1) {
            whole = pieces.get(0).data();
        } else {
            CompositeByteBuf c = alloc.compositeDirectBuffer(Integer.MAX_VALUE); // never consolidated (copied)
            for (Piece p : pieces) {
                c.addComponent(true, p.data());
            }
            whole = c;
        }
        pieces.clear();
        return whole;
    }

    void release() {
        released = true;
        for (Piece p : pieces) {
            p.data().release();
        }
        pieces.clear();
    }
}
