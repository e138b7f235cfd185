package io.fastblock.storage.chunk;

import io.fastblock.protocol.ChunkId;
import java.io.IOException;

/**
 * The chunk's local copy is being brought back in line with the tail after an unclean
 * shutdown and must not be read yet; the caller answers the read from another replica.
 */
public final class ChunkResyncingException extends IOException {
    private static final long serialVersionUID = 1L;
    private final transient ChunkId chunk;

    public ChunkResyncingException(ChunkId chunk) {
        super("chunk " + chunk + " is resyncing from its tail after an unclean shutdown", null);
        this.chunk = chunk;
    }

    public ChunkId chunk() {
        return chunk;
    }
}
