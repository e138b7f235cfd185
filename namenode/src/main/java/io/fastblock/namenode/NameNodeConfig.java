package io.fastblock.namenode;

import io.fastblock.namenode.api.ChunkSizes;
import io.fastblock.namenode.api.SizeParser;
import io.fastblock.protocol.Ports;
import io.fastblock.protocol.config.CommandLine;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Everything a namenode can be told, with defaults for one machine.
 *
 * @param dataDir          where the embedded ZooKeeper keeps its snapshots and transaction log
 * @param listenHost       address the REST API binds (127.0.0.1 by default: never exposed by accident)
 * @param httpPort         REST port; 0 picks a free one (tests)
 * @param zkConnect        ZooKeeper connect string; empty means start an embedded ZooKeeper server
 * @param zkPort           client port of the embedded ZooKeeper; 0 picks a free one (tests)
 * @param chunkSize        default chunk size of new volumes, bytes
 * @param replication      replicas per chunk; only 3 is supported (head, middle, tail)
 * @param apiToken         bearer token every route but /v1/health requires; empty: no authentication
 * @param tlsKeystore      PKCS12/JKS keystore with the server certificate; empty: plain HTTP
 * @param tlsPassword      password of the keystore (and its key)
 * @param advertiseUrl     URL other namenodes redirect clients to when this one leads; empty: derived
 *                         from the scheme, listen address and port
 * @param oversubscription provisioned bytes may reach usable capacity times this (thin provisioning);
 *                         0 disables the check
 * @param leaseTtl         how long a write lease lasts without renewal
 * @param maxConcurrentJoins replicas being caught up at once over the cluster (re-replication throttle)
 * @param replaceAfter     the down/out interval (Ceph's mon_osd_down_out_interval): a group member whose
 *                         session expires leaves its chains at once, but its groups wait this long for it
 *                         before re-replicating elsewhere, so a server back within it rejoins its own
 *                         groups and catches up by delta; a group down to one copy and a drain do not
 *                         wait. {@code --replace-after-ms}, default 60000; 0 replaces at once
 * @param fenceTimeout     how long each live storage server gets to confirm a FENCE (a write lease moves,
 *                         a layer is sealed); past it the request answers 503 and is asked again
 * @param formationSettle  the first replication groups are formed once the set of live storage nodes
 *                         has not changed for this long (servers started together all get groups)
 */
public record NameNodeConfig(Path dataDir, String listenHost, int httpPort, String zkConnect, int zkPort,
                             long chunkSize, int replication, String apiToken, String tlsKeystore,
                             String tlsPassword, String advertiseUrl, double oversubscription, Duration leaseTtl,
                             int maxConcurrentJoins, Duration replaceAfter, Duration fenceTimeout,
                             Duration formationSettle) {

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
        if (!(oversubscription >= 0) || Double.isInfinite(oversubscription)) {
            throw new IllegalArgumentException("--oversubscription must be a number >= 0 (0: no limit), got "
                    + oversubscription);
        }
        if (leaseTtl.toMillis() < 1000) {
            throw new IllegalArgumentException("--lease-ttl-ms must be at least 1000, got " + leaseTtl.toMillis());
        }
        if (fenceTimeout.toMillis() < 100) {
            throw new IllegalArgumentException("--fence-timeout-ms must be at least 100, got " + fenceTimeout.toMillis());
        }
        if (formationSettle.isNegative()) {
            throw new IllegalArgumentException("--formation-settle-ms must be >= 0, got " + formationSettle.toMillis());
        }
        if (replaceAfter == null || replaceAfter.isNegative()) {
            throw new IllegalArgumentException("--replace-after-ms must be >= 0 (0: replace a lost member at once), got "
                    + (replaceAfter == null ? null : replaceAfter.toMillis()));
        }
        if (maxConcurrentJoins < 1) {
            throw new IllegalArgumentException("--max-concurrent-joins must be >= 1, got " + maxConcurrentJoins);
        }
        zkConnect = zkConnect == null ? "" : zkConnect.trim();
        apiToken = apiToken == null ? "" : apiToken;
        tlsKeystore = tlsKeystore == null ? "" : tlsKeystore;
        tlsPassword = tlsPassword == null ? "" : tlsPassword;
        advertiseUrl = advertiseUrl == null ? "" : advertiseUrl.replaceAll("/+$", "");
    }

    /** Default down/out interval: a minute covers a process restart or a quick reboot. */
    public static final long DEFAULT_REPLACE_AFTER_MS = 60_000;

    public static NameNodeConfig defaults() {
        return fromArgs();
    }

    /** What {@code --help} says of each flag; the defaults are added from the parse itself. */
    static final java.util.Map<String, String> FLAGS = java.util.Map.ofEntries(
            java.util.Map.entry("data-dir", "where the embedded ZooKeeper keeps its snapshots and transaction log"),
            java.util.Map.entry("listen", "address the REST API binds"),
            java.util.Map.entry("http-port", "REST port"),
            java.util.Map.entry("zk", "ZooKeeper connect string; none: start an embedded ZooKeeper server"),
            java.util.Map.entry("zk-port", "client port of the embedded ZooKeeper"),
            java.util.Map.entry("chunk-size", "default chunk size of new volumes, bytes or with a suffix (64M)"),
            java.util.Map.entry("replication", "replicas per chunk; only 3 (head, middle, tail)"),
            java.util.Map.entry("api-token", "bearer token every route but /v1/health requires; none: no authentication"),
            java.util.Map.entry("tls-keystore", "PKCS12 or JKS keystore with the server certificate; none: plain HTTP"),
            java.util.Map.entry("tls-password", "password of the keystore and its key"),
            java.util.Map.entry("advertise-url", "URL other namenodes send clients to while this one leads;"
                    + " none: from the scheme, listen address and port"),
            java.util.Map.entry("oversubscription", "provisioned bytes may reach usable capacity times this; 0: no limit"),
            java.util.Map.entry("lease-ttl-ms", "how long a volume's write lease lasts without renewal, at least 1000"),
            java.util.Map.entry("max-concurrent-joins", "replicas caught up at once over the cluster (re-replication throttle)"),
            java.util.Map.entry("replace-after-ms", "how long a lost member's groups wait for it before re-replicating"
                    + " elsewhere; 0: at once"),
            java.util.Map.entry("fence-timeout-ms", "how long each live storage server gets to confirm a fence"
                    + " (a write lease moves, a layer is sealed)"),
            java.util.Map.entry("formation-settle-ms", "the first replication groups are formed once the set of live"
                    + " storage servers has not changed for this long"));

    public static NameNodeConfig fromArgs(String... args) {
        return from(CommandLine.parse(args));
    }

    /** The text {@code --help} prints, listing every flag {@link #fromArgs} reads. */
    public static String usage() {
        return CommandLine.usage(NameNodeConfig::from, "namenode [--name=value ...]", FLAGS);
    }

    static NameNodeConfig from(CommandLine cl) {
        Path dataDir = Path.of(cl.get("data-dir", "./var/namenode"));
        String host = cl.get("listen", "127.0.0.1");
        int httpPort = cl.getInt("http-port", Ports.NAMENODE_HTTP);
        String zk = cl.get("zk", "");
        int zkPort = cl.getInt("zk-port", Ports.ZOOKEEPER);
        String chunk = cl.get("chunk-size", Long.toString(ChunkSizes.DEFAULT));
        int replication = cl.getInt("replication", 3);
        String token = cl.get("api-token", "");
        String keystore = cl.get("tls-keystore", "");
        String password = cl.get("tls-password", "");
        String advertise = cl.get("advertise-url", "");
        String oversub = cl.get("oversubscription", "4.0");
        long leaseTtlMs = cl.getLong("lease-ttl-ms", 15_000);
        int joins = cl.getInt("max-concurrent-joins", 2);
        long replaceAfterMs = cl.getLong("replace-after-ms", DEFAULT_REPLACE_AFTER_MS);
        long fenceMs = cl.getLong("fence-timeout-ms", 10_000);
        long settleMs = cl.getLong("formation-settle-ms", 2_000);
        cl.rejectUnknown();
        long chunkSize;
        try {
            chunkSize = SizeParser.parseBytes(chunk);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--chunk-size: " + e.getMessage());
        }
        double ratio;
        try {
            ratio = Double.parseDouble(oversub);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--oversubscription must be a number >= 0, got '" + oversub + "'");
        }
        return new NameNodeConfig(dataDir, host, httpPort, zk, zkPort, chunkSize, replication, token, keystore,
                password, advertise, ratio, Duration.ofMillis(leaseTtlMs), joins, Duration.ofMillis(replaceAfterMs),
                Duration.ofMillis(fenceMs), Duration.ofMillis(settleMs));
    }

    public boolean embeddedZooKeeper() {
        return zkConnect.isEmpty();
    }

    public boolean tls() {
        return !tlsKeystore.isEmpty();
    }

    public NameNodeConfig withZkConnect(String connect) {
        return new NameNodeConfig(dataDir, listenHost, httpPort, connect, zkPort, chunkSize, replication, apiToken,
                tlsKeystore, tlsPassword, advertiseUrl, oversubscription, leaseTtl, maxConcurrentJoins, replaceAfter,
                fenceTimeout, formationSettle);
    }
}
