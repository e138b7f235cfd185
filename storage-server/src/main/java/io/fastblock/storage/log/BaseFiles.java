package io.fastblock.storage.log;

import io.fastblock.protocol.ChunkId;
import io.netty.buffer.ByteBuf;
import java.io.IOException;

/**
 * The in-place chunk files under the log: what a tail reads where its log holds nothing for a
 * byte, and where {@link LogStore#fold} moves a chunk's log extents to. Head and middle write
 * these same files directly (see {@code ChunkStore}).
 */
public interface BaseFiles {
    /** Fills {@code dst[index, index + length)} with the chunk's bytes at {@code offset}; zeros where the file has none. */
    void read(ChunkId chunk, long offset, ByteBuf dst, int index, int length) throws IOException;

    /** Writes {@code data} (not released) at {@code offset} of the chunk's file, ordered after earlier writes to that chunk. */
    void write(ChunkId chunk, long offset, ByteBuf data) throws IOException;

    /** Makes everything written to the chunk's file durable. */
    void force(ChunkId chunk) throws IOException;

    /** Gives back {@code [offset, offset + length)} of the chunk's file (zeros, not allocated), ordered after earlier writes. */
    default void trim(ChunkId chunk, long offset, long length) throws IOException {
        throw new UnsupportedOperationException("these base files cannot be trimmed");
    }

    /** The allocated ranges of the chunk's file within {@code [offset, offset + length)}. */
    default io.fastblock.protocol.Extents extents(ChunkId chunk, long offset, long length) throws IOException {
        return io.fastblock.protocol.Extents.NONE;
    }

    /** No base files: every byte the log lacks reads as zero, and nothing can be folded. */
    BaseFiles NONE = new BaseFiles() {
        @Override
        public void read(ChunkId chunk, long offset, ByteBuf dst, int index, int length) {
            dst.setZero(index, length);
        }

        @Override
        public void write(ChunkId chunk, long offset, ByteBuf data) {
            throw new UnsupportedOperationException("this log store has no base files to fold into");
        }

        @Override
        public void force(ChunkId chunk) {
            throw new UnsupportedOperationException("this log store has no base files to fold into");
        }
    };
}
