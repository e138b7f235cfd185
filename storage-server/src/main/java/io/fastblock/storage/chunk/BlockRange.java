package io.fastblock.storage.chunk;

/** A block-aligned byte range of a chunk (a bad stretch found by a check). */
public record BlockRange(long offset, long length) {
    public long end() {
        return offset + length;
    }
}
