package io.fastblock.storage.chunk;

import io.fastblock.protocol.ChunkId;
import java.io.IOException;

/**
 * Blocks of a chunk file whose data does not match their CRC32C: the on-disk copy is bad and
 * must be answered from, and repaired with, another replica. Carries the byte range of the bad
 * blocks (block-aligned, may extend past what the read asked for).
 */
public final class CorruptBlockException extends IOException {
    private static final long serialVersionUID = 1L;
    private final transient ChunkId chunk;
    private final long offset;
    private final long length;

    public CorruptBlockException(ChunkId chunk, long offset, long length) {
        super("chunk " + chunk + ": CRC32C mismatch in blocks " + offset / ChunkFile.BLOCK + ".."
                + ((offset + length) / ChunkFile.BLOCK - 1) + " (bytes " + offset + "+" + length + ")");
        this.chunk = chunk;
        this.offset = offset;
        this.length = length;
    }

    public ChunkId chunk() {
        return chunk;
    }

    /** First byte of the first bad block. */
    public long offset() {
        return offset;
    }

    /** Bytes from {@link #offset} to the end of the last bad block. */
    public long length() {
        return length;
    }
}
