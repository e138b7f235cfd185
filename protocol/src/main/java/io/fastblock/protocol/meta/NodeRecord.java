package io.fastblock.protocol.meta;

import java.util.Map;

/**
 * A storage server as registered in ZooKeeper; {@code id} is stable across restarts (kept in its data dir).
 *
 * <p>{@code labels} name the node's failure domains ({@link #LABEL_HOST}, {@link #LABEL_RACK}); the
 * storage server takes them from its {@code --host-label} and {@code --rack-label} flags. A node
 * without labels is its own host and rack as far as placement is concerned. Records written before
 * labels existed read back with an empty map.
 */
public record NodeRecord(String id, String host, int port, long capacityBytes, long freeBytes,
                         Map<String, String> labels) {
    public static final String LABEL_HOST = "host";
    public static final String LABEL_RACK = "rack";

    public NodeRecord {
        labels = labels == null ? Map.of() : Map.copyOf(labels);
    }

    public NodeRecord(String id, String host, int port, long capacityBytes, long freeBytes) {
        this(id, host, port, capacityBytes, freeBytes, Map.of());
    }

    /** The node's host failure domain: its host label, else its own id (a node alone is its own domain). */
    public String hostDomain() {
        String h = labels.get(LABEL_HOST);
        return h == null || h.isEmpty() ? "node:" + id : h;
    }

    /** The node's rack failure domain: its rack label, else its host domain. */
    public String rackDomain() {
        String r = labels.get(LABEL_RACK);
        return r == null || r.isEmpty() ? hostDomain() : r;
    }
}
