package io.fastblock.gateway.client;

/**
 * The storage servers' allocation unit (4 KiB, contract A2): on a volume with lower layers a write
 * must cover whole blocks, or the rest of a partly written block would read as zeros from the top
 * instead of showing the lower layer's data.
 */
final class PartialBlocks {
    static final int BLOCK = 4096;

    private PartialBlocks() {
    }

    static boolean aligned(ChunkSlice s) {
        return s.offsetInChunk() % BLOCK == 0 && s.length() % BLOCK == 0;
    }

    static long down(long offset) {
        return offset / BLOCK * BLOCK;
    }

    static long up(long offset) {
        return (offset + BLOCK - 1) / BLOCK * BLOCK;
    }

    /** The namenode refused an allocation because the layer named is no longer the volume's top. */
    static boolean staleLayer(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof NamenodeException ne && "STALE_LAYER".equals(ne.code())) {
                return true;
            }
        }
        return false;
    }
}
