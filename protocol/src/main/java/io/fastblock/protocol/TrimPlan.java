package io.fastblock.protocol;

import java.util.ArrayList;
import java.util.List;

/**
 * How a deallocation of part of one chunk is carried out: storage servers trim whole 4 KiB
 * blocks only (contract A1), so the whole blocks inside the range are trimmed and the partial
 * blocks at its ends are written with zeros (they stay allocated, and read as zeros all the same).
 * The gateway plans its UNMAPs with it, and a storage server the gaps its catch-up gives back.
 */
public final class TrimPlan {
    /** The storage servers' allocation unit. */
    public static final int BLOCK = 4096;

    /** One storage request: a trim of whole blocks, or a zero write of part of a block. */
    public record Piece(long offsetInChunk, int length, boolean trim) {
    }

    private TrimPlan() {
    }

    /** The pieces for {@code [offsetInChunk, offsetInChunk + length)}, in order; none for an empty range. */
    public static List<Piece> of(long offsetInChunk, long length) {
        List<Piece> out = new ArrayList<>(3);
        long end = offsetInChunk + length;
        long firstWhole = (offsetInChunk + BLOCK - 1) / BLOCK * BLOCK;
        long lastWhole = end / BLOCK * BLOCK;
        if (firstWhole >= lastWhole) {
            if (length > 0) {
                out.add(new Piece(offsetInChunk, (int) length, false)); // inside one block (or two partial ones)
            }
            return out;
        }
        if (offsetInChunk < firstWhole) {
            out.add(new Piece(offsetInChunk, (int) (firstWhole - offsetInChunk), false));
        }
        for (long at = firstWhole; at < lastWhole; at += Integer.MAX_VALUE / BLOCK * BLOCK) {
            out.add(new Piece(at, (int) Math.min(lastWhole - at, Integer.MAX_VALUE / BLOCK * BLOCK), true));
        }
        if (lastWhole < end) {
            out.add(new Piece(lastWhole, (int) (end - lastWhole), false));
        }
        return out;
    }
}
