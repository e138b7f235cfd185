package io.fastblock.gateway.client;

import java.util.ArrayList;
import java.util.List;

/**
 * The part of a volume request that falls in one chunk: {@code offsetInChunk} within chunk
 * {@code chunkIndex}, {@code length} bytes, starting {@code bufferOffset} bytes into the request.
 */
public record ChunkSlice(long chunkIndex, long offsetInChunk, int length, int bufferOffset) {

    /**
     * Splits {@code [offset, offset + length)} at chunk boundaries and into pieces of at most
     * {@code maxPiece} bytes, in order.
     */
    public static List<ChunkSlice> split(long offset, int length, long chunkSize, int maxPiece) {
        if (offset < 0 || length < 0 || chunkSize <= 0 || maxPiece <= 0) {
            throw new IllegalArgumentException("bad split: offset " + offset + " length " + length
                    + " chunkSize " + chunkSize + " maxPiece " + maxPiece);
        }
        List<ChunkSlice> out = new ArrayList<>(2);
        int done = 0;
        while (done < length) {
            long pos = offset + done;
            long index = pos / chunkSize;
            long within = pos % chunkSize;
            int piece = (int) Math.min(Math.min(length - done, chunkSize - within), maxPiece);
            out.add(new ChunkSlice(index, within, piece, done));
            done += piece;
        }
        return out;
    }
}
