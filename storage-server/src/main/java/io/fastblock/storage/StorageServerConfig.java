package io.fastblock.storage;

import io.fastblock.protocol.Ports;
import io.fastblock.protocol.config.CommandLine;
import java.nio.file.Path;

/**
 * Settings of one storage server. {@code nodeId} may be null: the id is then read from (or
 * created in) the data directory, see {@link NodeIdentity}.
 */
public record StorageServerConfig(String nodeId, Path dataDir, String listen, int port, String zk, long segmentSize) {
    public static final long DEFAULT_SEGMENT_SIZE = 256L << 20;
    /** Small enough for tests that exercise roll-over, large enough to hold a header. */
    public static final long MIN_SEGMENT_SIZE = 4096;

    public StorageServerConfig {
        if (dataDir == null) {
            throw new IllegalArgumentException("--data-dir is required");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("--port must be 0..65535, got " + port);
        }
        if (segmentSize < MIN_SEGMENT_SIZE) {
            throw new IllegalArgumentException("--segment-size must be at least " + MIN_SEGMENT_SIZE + " bytes, got " + segmentSize);
        }
        if (nodeId != null) {
            NodeIdentity.validate(nodeId);
        }
    }

    public static StorageServerConfig fromArgs(String... args) {
        CommandLine cl = CommandLine.parse(args);
        String nodeId = cl.get("node-id", null);
        Path dataDir = Path.of(cl.get("data-dir", "./var/storage-1"));
        String listen = cl.get("listen", "127.0.0.1");
        int port = cl.getInt("port", Ports.STORAGE_FIRST);
        String zk = cl.get("zk", "127.0.0.1:" + Ports.ZOOKEEPER);
        String seg = cl.get("segment-size", null);
        long segmentSize = seg == null ? DEFAULT_SEGMENT_SIZE : ByteSize.parse("segment-size", seg);
        cl.rejectUnknown();
        return new StorageServerConfig(nodeId, dataDir, listen, port, zk, segmentSize);
    }

    public StorageServerConfig withPort(int newPort) {
        return new StorageServerConfig(nodeId, dataDir, listen, newPort, zk, segmentSize);
    }
}
