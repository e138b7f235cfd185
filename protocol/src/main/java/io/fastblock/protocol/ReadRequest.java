package io.fastblock.protocol;

/**
 * Read {@code length} bytes at {@code offset} within a chunk from the receiving replica's own copy.
 * With {@link #FLAG_WITH_EXTENTS} the answer data is the range's {@link Extents} (allocated blocks)
 * followed by the bytes, so a layered reader learns both in one round trip.
 */
public record ReadRequest(long requestId, int flags, ChainAddress chain, ChunkId chunk, long offset, int length)
        implements StorageMessage {
    public static final int FLAG_WITH_EXTENTS = 0x02;
    /**
     * The longest read with extents: its answer (the bytes plus an extent list of up to one range
     * per two blocks, 12 bytes each) must fit one frame's data.
     */
    public static final int MAX_LENGTH_WITH_EXTENTS = io.fastblock.protocol.codec.StorageFrames.MAX_DATA - 32 * 1024;

    /** A plain read (no flags). */
    public ReadRequest(long requestId, ChainAddress chain, ChunkId chunk, long offset, int length) {
        this(requestId, 0, chain, chunk, offset, length);
    }

    /** A read whose answer is the extent list of the range followed by its bytes. */
    public static ReadRequest withExtents(long requestId, ChainAddress chain, ChunkId chunk, long offset, int length) {
        return new ReadRequest(requestId, FLAG_WITH_EXTENTS, chain, chunk, offset, length);
    }

    public boolean wantsExtents() {
        return (flags & FLAG_WITH_EXTENTS) != 0;
    }

    @Override
    public OpCode op() {
        return OpCode.READ;
    }
}
