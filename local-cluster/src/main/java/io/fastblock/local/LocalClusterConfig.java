package io.fastblock.local;

import io.fastblock.protocol.Ports;
import io.fastblock.protocol.config.CommandLine;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * How the one-machine cluster is laid out: every process's data under {@code dataDir}, ports
 * from the defaults unless told otherwise (tests pick free ones).
 *
 * <p>By default one namenode runs ZooKeeper embedded. With {@code zkServers} > 0 a real ensemble of
 * that many ZooKeeper processes runs instead (client ports from {@code zkPort} up, quorum and
 * election ports from {@code zkPeerPort} up), and {@code namenodeCount} namenodes (HTTP ports from
 * {@code namenodePort} up) share it. With {@code racks} > 0 storage server i is labelled rack
 * {@code rack-((i-1) % racks + 1)} and host {@code host-i}, so placement has failure domains.
 *
 * <p>Each storage server runs in a JVM of its own unless {@code sharedStorageJvm}: then they all
 * run in one ({@code io.fastblock.storage.StorageServerGroup}), which costs less CPU per write on a
 * small machine but makes the JVM, not the server, the unit that fails.
 */
public record LocalClusterConfig(Path dataDir, int zkPort, int namenodePort, int storagePort, int storageCount,
                                 int iscsiPort, String chunkSize, String demoVolume, String demoSize,
                                 boolean createDemo, String childHeap, int zkServers, int zkPeerPort,
                                 int namenodeCount, int racks, List<String> storageArgs, List<String> namenodeArgs,
                                 List<String> gatewayArgs, boolean sharedStorageJvm) {

    public LocalClusterConfig {
        storageArgs = storageArgs == null ? List.of() : List.copyOf(storageArgs);
        namenodeArgs = namenodeArgs == null ? List.of() : List.copyOf(namenodeArgs);
        gatewayArgs = gatewayArgs == null ? List.of() : List.copyOf(gatewayArgs);
    }

    /** What {@code --help} says of each flag; the defaults are added from the parse itself. */
    static final java.util.Map<String, String> FLAGS = java.util.Map.ofEntries(
            java.util.Map.entry("data-dir", "every process's data goes under this directory; running again on it"
                    + " brings the data back"),
            java.util.Map.entry("zk-port", "ZooKeeper's client port (the first, with --zk-servers)"),
            java.util.Map.entry("namenode-port", "the namenode's REST port (the first, with --namenodes)"),
            java.util.Map.entry("storage-port", "the first storage server's port; the others follow"),
            java.util.Map.entry("storage-count", "storage servers, at least 3"),
            java.util.Map.entry("iscsi-port", "the gateway's iSCSI port"),
            java.util.Map.entry("chunk-size", "chunk size of the cluster's volumes"),
            java.util.Map.entry("demo-volume", "name of the volume created and exported at start"),
            java.util.Map.entry("demo-size", "its size"),
            java.util.Map.entry("no-demo", "create no volume"),
            java.util.Map.entry("child-heap", "heap of each child JVM (times the servers for a shared storage JVM)"),
            java.util.Map.entry("zk-servers", "0: ZooKeeper embedded in the namenode; 1 or 3..7: an ensemble of"
                    + " separate processes"),
            java.util.Map.entry("zk-peer-port", "with --zk-servers, the first of 2 x zk-servers quorum and election ports"),
            java.util.Map.entry("namenodes", "namenodes; more than 1 needs --zk-servers"),
            java.util.Map.entry("racks", "label storage servers with this many racks (and a host each) for placement;"
                    + " 0: no labels"),
            java.util.Map.entry("storage-args", "more flags for every storage server (see storage-server --help)"),
            java.util.Map.entry("namenode-args", "more flags for the namenodes (see namenode --help)"),
            java.util.Map.entry("gateway-args", "more flags for the gateway (see gateway --help)"),
            java.util.Map.entry("storage-jvm", "separate: a JVM per storage server; shared: all of them in one JVM"
                    + " (less CPU per write, one failure unit)"));

    public static LocalClusterConfig fromArgs(String... args) {
        return from(CommandLine.parse(args));
    }

    /** The text {@code --help} prints, listing every flag {@link #fromArgs} reads. */
    public static String usage() {
        return CommandLine.usage(LocalClusterConfig::from, "fastblock-local-cluster [--name=value ...]: ZooKeeper,"
                + " namenode, storage servers and an iSCSI gateway on this machine", FLAGS);
    }

    static LocalClusterConfig from(CommandLine cl) {
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
                cl.get("child-heap", "256m"),
                cl.getInt("zk-servers", 0),
                cl.getInt("zk-peer-port", 0),
                cl.getInt("namenodes", 1),
                cl.getInt("racks", 0),
                splitArgs(cl.get("storage-args", "")),
                splitArgs(cl.get("namenode-args", "")),
                splitArgs(cl.get("gateway-args", "")),
                storageJvm(cl.get("storage-jvm", "separate")));
        cl.rejectUnknown();
        if (c.storageCount < 3) {
            throw new IllegalArgumentException("--storage-count must be at least 3 (chains of 3), got " + c.storageCount);
        }
        if (c.zkServers < 0 || c.zkServers == 2 || c.zkServers > 7) {
            throw new IllegalArgumentException("--zk-servers must be 0 (embedded), 1 or 3..7, got " + c.zkServers);
        }
        if (c.zkServers > 0 && c.zkPeerPort == 0) {
            throw new IllegalArgumentException("--zk-servers needs --zk-peer-port (first of 2 x zk-servers ports)");
        }
        if (c.namenodeCount < 1 || (c.namenodeCount > 1 && c.zkServers == 0)) {
            throw new IllegalArgumentException("--namenodes must be 1, or more with --zk-servers (an embedded ZooKeeper"
                    + " dies with its namenode), got " + c.namenodeCount);
        }
        if (c.sharedStorageJvm) {
            c.storageGroupHeap(); // a heap size the JVM would refuse fails here, with the flag's name
        }
        if (c.racks < 0) {
            throw new IllegalArgumentException("--racks must be >= 0, got " + c.racks);
        }
        return c;
    }

    private static boolean storageJvm(String value) {
        return switch (value) {
            case "separate" -> false;
            case "shared" -> true;
            default -> throw new IllegalArgumentException("--storage-jvm must be separate (a JVM per storage server) or"
                    + " shared (one JVM for all of them), got " + value);
        };
    }

    /** Extra flags for every storage server (or the namenodes, or the gateway), space-separated. */
    private static List<String> splitArgs(String text) {
        List<String> out = new ArrayList<>();
        for (String a : text.trim().split("\\s+")) {
            if (!a.isEmpty()) {
                out.add(a);
            }
        }
        return out;
    }

    /** The shared storage JVM's heap: {@code childHeap} for each server in it, in the JVM's notation. */
    public String storageGroupHeap() {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d+)([kKmMgG]?)").matcher(childHeap);
        if (!m.matches()) {
            throw new IllegalArgumentException("--child-heap must be a JVM heap size such as 256m, got " + childHeap);
        }
        return Math.multiplyExact(Long.parseLong(m.group(1)), storageCount) + m.group(2);
    }

    /** The first namenode's URL. */
    public String namenodeUrl() {
        return namenodeUrl(1);
    }

    public String namenodeUrl(int i) {
        return "http://127.0.0.1:" + (namenodePort + i - 1);
    }

    /** Every namenode's URL, comma-separated: what gateways and clients are given. */
    public String namenodeUrls() {
        List<String> urls = new ArrayList<>();
        for (int i = 1; i <= namenodeCount; i++) {
            urls.add(namenodeUrl(i));
        }
        return String.join(",", urls);
    }

    /** The ZooKeeper connect string every server uses. */
    public String zkConnect() {
        if (zkServers == 0) {
            return "127.0.0.1:" + zkPort;
        }
        List<String> hosts = new ArrayList<>();
        for (int i = 0; i < zkServers; i++) {
            hosts.add("127.0.0.1:" + (zkPort + i));
        }
        return String.join(",", hosts);
    }

    /** The ensemble's servers, in id order (empty with an embedded ZooKeeper). */
    public List<ZooKeeperPeer.Server> zkEnsemble() {
        List<ZooKeeperPeer.Server> out = new ArrayList<>();
        for (int i = 0; i < zkServers; i++) {
            out.add(new ZooKeeperPeer.Server("127.0.0.1", zkPort + i, zkPeerPort + 2 * i, zkPeerPort + 2 * i + 1));
        }
        return out;
    }
}
