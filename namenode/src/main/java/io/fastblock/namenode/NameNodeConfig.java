package io.fastblock.namenode;

import io.fastblock.namenode.api.ChunkSizes;
import io.fastblock.namenode.api.SizeParser;
import io.fastblock.protocol.Ports;
import io.fastblock.protocol.config.CommandLine;
import java.nio.file.Path;

/**
 * Everything a namenode can be told, with defaults for one machine.
 *
 * @param dataDir       where the embedded ZooKeeper keeps its snapshots and transaction log
 * @param listenHost    address the REST API binds (127.0.0.1 by default: never exposed by accident)
 * @param httpPort      REST port; 0 picks a free one (tests)
 * @param zkConnect     ZooKeeper connect string; empty means start an embedded ZooKeeper server
 * @param zkPort        client port of the embedded ZooKeeper; 0 picks a free one (tests)
 * @param chunkSize     default chunk size of new volumes, bytes
 * @param replication   replicas per chunk; only 3 is supported (head, middle, tail)
 */
public record NameNodeConfig(Path dataDir, String listenHost, int httpPort, String zkConnect, int zkPort,
                             long chunkSize, int replication) {

    public NameNodeConfig {
        if (httpPort < 0 || httpPort > 65535) {
            throw new IllegalArgumentException("--http-port must be 0..65535, got " + httpPort);
        }
        if (zkPort < 0 || zkPort > 65535) {
            throw new IllegalArgumentException("--zk-port must be 0..65535, got " + zkPort);
        }
        if (replication != 3) {
            throw new IllegalArgumentException("--replication must be 3 (chain replication: head, middle, tail), got "
                    + replication);
        }
        try {
            ChunkSizes.check(chunkSize);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--chunk-size: " + e.getMessage());
        }
        zkConnect = zkConnect == null ? "" : zkConnect.trim();
    }

    public static NameNodeConfig defaults() {
        return fromArgs();
    }

    public static NameNodeConfig fromArgs(String... args) {
        CommandLine cl = CommandLine.parse(args);
        Path dataDir = Path.of(cl.get("data-dir", "./var/namenode"));
        String host = cl.get("listen", "127.0.0.1");
        int httpPort = cl.getInt("http-port", Ports.NAMENODE_HTTP);
        String zk = cl.get("zk", "");
        int zkPort = cl.getInt("zk-port", Ports.ZOOKEEPER);
        String chunk = cl.get("chunk-size", Long.toString(ChunkSizes.DEFAULT));
        int replication = cl.getInt("replication", 3);
        cl.rejectUnknown();
        long chunkSize;
        try {
            chunkSize = SizeParser.parseBytes(chunk);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--chunk-size: " + e.getMessage());
        }
        return new NameNodeConfig(dataDir, host, httpPort, zk, zkPort, chunkSize, replication);
    }

    public boolean embeddedZooKeeper() {
        return zkConnect.isEmpty();
    }

    public NameNodeConfig withZkConnect(String connect) {
        return new NameNodeConfig(dataDir, listenHost, httpPort, connect, zkPort, chunkSize, replication);
    }
}
