package io.fastblock.protocol.meta;

import java.util.Map;

/**
 * A storage server's heartbeat: its load figures, written to the ephemeral
 * {@code /fastblock/load/{nodeId}} at a bounded rate (it vanishes with the server's session).
 *
 * @param capacityBytes    size of the file system holding the server's data
 * @param freeBytes        bytes still usable there
 * @param queueDepth       requests being served right now, by class ({@link #READ}, {@link #WRITE},
 *                         {@link #CATCH_UP}, {@link #OTHER})
 * @param reportedAtMillis when the figures were taken (the server's clock)
 */
public record NodeLoad(long capacityBytes, long freeBytes, Map<String, Integer> queueDepth, long reportedAtMillis) {
    /** Reads and EXTENTS from gateways. */
    public static final String READ = "read";
    /** Writes and trims, from gateways or forwarded along a chain. */
    public static final String WRITE = "write";
    /** CHUNK_LIST and COPY_READ: a joining replica copying from the tail (re-replication). */
    public static final String CATCH_UP = "catch-up";
    /** PING, FENCE. */
    public static final String OTHER = "other";

    public NodeLoad {
        queueDepth = queueDepth == null ? Map.of() : Map.copyOf(queueDepth);
    }
}
