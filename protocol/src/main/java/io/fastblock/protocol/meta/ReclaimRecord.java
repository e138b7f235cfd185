package io.fastblock.protocol.meta;

import java.util.List;

/**
 * Work for the leader's reclaimer, written in the same ZooKeeper transaction as the metadata change
 * that made it necessary, so a crash between the two never leaks space.
 *
 * <p>{@code shadowedBy} empty: every chunk of layer {@code layerId} is trimmed whole, then the
 * layer's znodes go. Otherwise the layer stays in use, and in each of its chunks the 4 KiB blocks
 * that one of the {@code shadowedBy} layers (above it in the only stack that still uses it) has
 * allocated are trimmed: nobody can read them any more.
 */
public record ReclaimRecord(long layerId, List<Long> shadowedBy, String reason) {
    public ReclaimRecord {
        shadowedBy = shadowedBy == null ? List.of() : List.copyOf(shadowedBy);
    }

    public boolean wholeLayer() {
        return shadowedBy.isEmpty();
    }
}
