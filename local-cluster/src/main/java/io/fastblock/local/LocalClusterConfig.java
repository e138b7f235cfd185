package io.fastblock.local;

import io.fastblock.protocol.Ports;
import io.fastblock.protocol.config.CommandLine;
import java.nio.file.Path;

/**
 * How the one-machine cluster is laid out: every process's data under {@code dataDir}, ports
 * from the defaults unless told otherwise (tests pick free ones).
 */
public record LocalClusterConfig(Path dataDir, int zkPort, int namenodePort, int storagePort, int storageCount,
                                 int iscsiPort, String chunkSize, String demoVolume, String demoSize,
                                 boolean createDemo, String childHeap) {

    public static LocalClusterConfig fromArgs(String... args) {
        CommandLine cl = CommandLine.parse(args);
        LocalClusterConfig c = new LocalClusterConfig(
                Path.of(cl.get("data-dir", "var")).toAbsolutePath().normalize(),
                cl.getInt("zk-port", Ports.ZOOKEEPER),
                cl.getInt("namenode-port", Ports.NAMENODE_HTTP),
                cl.getInt("storage-port", Ports.STORAGE_FIRST),
                cl.getInt("storage-count", 3),
                cl.getInt("iscsi-port", Ports.ISCSI),
                cl.get("chunk-size", "64M"),
                cl.get("demo-volume", "demo"),
                cl.get("demo-size", "10G"),
                !cl.getBoolean("no-demo", false),
                cl.get("child-heap", "256m"));
        cl.rejectUnknown();
        if (c.storageCount < 3) {
            throw new IllegalArgumentException("--storage-count must be at least 3 (chains of 3), got " + c.storageCount);
        }
        return c;
    }

    public String namenodeUrl() {
        return "http://127.0.0.1:" + namenodePort;
    }
}
