package io.fastblock.storage;

import io.fastblock.protocol.Ports;
import io.fastblock.protocol.config.ByteSize;
import io.fastblock.protocol.config.CommandLine;
import io.fastblock.storage.chain.ChainLimits;
import io.fastblock.storage.chain.TailLayout;
import io.fastblock.storage.io.MappingBudget;
import io.fastblock.storage.log.LogCleaner;
import io.fastblock.protocol.meta.NodeRecord;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;

/**
 * Settings of one storage server. {@code nodeId} may be null: the id is then read from (or
 * created in) the data directory, see {@link NodeIdentity}.
 *
 * <p>{@code zkSessionTimeoutMs} bounds how long a dead server still looks live: its ephemeral
 * node under {@code /fastblock/live} goes only when the session expires, and chain repair starts
 * only then. Gateways retry a request for 12 s, so detection has to be well inside that.
 */
public record StorageServerConfig(String nodeId, Path dataDir, String listen, int port, String zk, long segmentSize,
                                  ChainLimits chain, TailLayout tailLayout, int zkSessionTimeoutMs, BackgroundRates background,
                                  Map<String, String> labels, long heartbeatMillis, int ioThreads, int networkThreads,
                                  double logCleanTarget, boolean logDirectIo, long checkpointMillis, int mappedChunks) {
    /** FAST's layout: the tail writes only its log (see {@link TailLayout}). */
    public static final TailLayout DEFAULT_TAIL_LAYOUT = TailLayout.LOG;

    /**
     * Log segment size ({@code --segment-size}). The cleaner frees whole sealed segments, so it can pick
     * mostly dead ones only when the log spans many of them; the active segment is never cleaned. Measured
     * on 2 vCPUs with ~170 MiB of live log per node (docs/performance.md), 64 MiB segments against 256 MiB:
     * 4 KiB QD32 random writes +14% (median of 11 rounds, and a steadier rate), 1 MiB writes +30-40%. Each
     * segment keeps a file open, so a node's open files grow with its log (about 16 per GiB).
     */
    public static final long DEFAULT_SEGMENT_SIZE = 64L << 20;
    /** Small enough for tests that exercise roll-over, large enough to hold a header. */
    public static final long MIN_SEGMENT_SIZE = 4096;
    /** A dead server leaves its chains about this long after it died (the gateway's retry budget is 12 s). */
    public static final int DEFAULT_ZK_SESSION_TIMEOUT_MS = 5000;
    /** How often the heartbeat (free space, queue depths) is written to ZooKeeper. */
    public static final long DEFAULT_HEARTBEAT_MS = 2000;
    /**
     * Chunk I/O threads, the chunk store's stripes ({@code --io-threads}). Measured on 2 vCPUs with three
     * servers, 1, 2 and 4 stripes wrote 4 KiB QD32 random writes within the noise of each other
     * (docs/performance.md), so the default stays at 4, which keeps large I/O parallel on bigger machines.
     */
    public static final int DEFAULT_IO_THREADS = 4;
    /** Most chunk I/O threads. */
    public static final int MAX_IO_THREADS = 64;
    /**
     * Network event loops ({@code --network-threads}). With one, a write received from the predecessor,
     * its forward to the successor and the acknowledgement coming back all stay on one thread; with two,
     * the connections landed on either loop and about half of those steps crossed threads (a task queue
     * and a wake-up each). Measured on 2 vCPUs with three servers (docs/performance.md): one loop wrote
     * 4 KiB QD32 random writes 14% faster than two with ~18% less server CPU per write, and moved 1 MiB
     * transfers up to ~10% slower. Raise it where one core cannot carry a node's messages.
     */
    public static final int DEFAULT_NETWORK_THREADS = 1;
    /** Most network event loops. */
    public static final int MAX_NETWORK_THREADS = 64;
    /**
     * The log cleaner's utilisation target ({@code --log-clean-target}, live / on-disk bytes of the
     * tail's log): segments are copied out only while the log holds less live data than this share of
     * its size, so at 0.5 it may grow to about twice its live bytes. A higher target saves disk and
     * costs CPU and log writes: measured on 2 vCPUs (docs/performance.md), at 0.85 copying live records
     * took about a third of the servers' CPU per 4 KiB random overwrite. While foreground writes are busy
     * the cleaner works to half the target and catches up in the pauses. Whatever the target, a log whose
     * filesystem is 10% free or less is cleaned to 0.85 (see {@link LogCleaner}).
     */
    public static final double DEFAULT_LOG_CLEAN_TARGET = LogCleaner.Settings.DEFAULT_TARGET;

    /**
     * How often head and middle force their dirty chunk files and record the checkpoint
     * ({@code --checkpoint-ms}). They write in place without fsync (the tail's log is the durable copy);
     * after a power loss they re-fetch from the tail what was written to a chunk since its last checkpoint,
     * and after a kill -9 a joining node asks the tail for the writes above it. Linux writes dirty pages
     * back once they are 30 s old anyway (vm.dirty_expire_centisecs), so a shorter interval only forces
     * pages sooner: random 4 KiB overwrites are then written back before the next overwrite of the same
     * block could replace them in the cache. Measured on 2 vCPUs (docs/performance.md), two clusters, 60 s
     * of 4 KiB QD32 random writes over 512 MiB with the final sync counted, two runs each: 30 s against 5 s,
     * 18 447-19 488 against 16 851-18 092 IOPS (with this flag; 18 977-19 681 against 17 064-17 139 in a
     * first build); 15 s, 18 700-18 881 against 15 374-16 929. The price is paid after a crash: a chunk
     * stays in the dirty record until a checkpoint a whole interval after its last write, and a node that
     * comes back from a kill -9 copies each chunk still recorded dirty whole instead of by delta, so up to
     * two intervals of written chunks (a minute at 30 s, ten seconds at 5 s).
     */
    public static final long DEFAULT_CHECKPOINT_MS = 30_000;
    /** Shortest checkpoint interval. */
    public static final long MIN_CHECKPOINT_MS = 100;

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
        if (chain == null) {
            chain = ChainLimits.DEFAULTS;
        }
        if (tailLayout == null) {
            tailLayout = DEFAULT_TAIL_LAYOUT;
        }
        if (background == null) {
            background = BackgroundRates.DEFAULTS;
        }
        // ZooKeeper clamps sessions to 2..20 ticks; below a second the heartbeats fail on a busy machine.
        if (zkSessionTimeoutMs < 1000) {
            throw new IllegalArgumentException("--zk-session-timeout-ms must be at least 1000, got " + zkSessionTimeoutMs);
        }
        labels = labels == null ? Map.of() : Map.copyOf(labels);
        if (heartbeatMillis < 100) {
            throw new IllegalArgumentException("--heartbeat-ms must be at least 100, got " + heartbeatMillis);
        }
        if (ioThreads < 1 || ioThreads > MAX_IO_THREADS) {
            throw new IllegalArgumentException("--io-threads must be 1.." + MAX_IO_THREADS + ", got " + ioThreads);
        }
        if (networkThreads < 1 || networkThreads > MAX_NETWORK_THREADS) {
            throw new IllegalArgumentException("--network-threads must be 1.." + MAX_NETWORK_THREADS + ", got " + networkThreads);
        }
        if (!(logCleanTarget > 0 && logCleanTarget <= 1)) {
            throw new IllegalArgumentException("--log-clean-target must be a share of the log in (0, 1], got " + logCleanTarget);
        }
        if (checkpointMillis < MIN_CHECKPOINT_MS) {
            throw new IllegalArgumentException("--checkpoint-ms must be at least " + MIN_CHECKPOINT_MS + ", got " + checkpointMillis);
        }
        if (mappedChunks < 0) {
            throw new IllegalArgumentException("--mapped-chunks must be 0 (no mapped reads) or more, got " + mappedChunks);
        }
    }

    /** With the default number of mapped chunk files. */
    public StorageServerConfig(String nodeId, Path dataDir, String listen, int port, String zk, long segmentSize,
                               ChainLimits chain, TailLayout tailLayout, int zkSessionTimeoutMs, BackgroundRates background,
                               Map<String, String> labels, long heartbeatMillis, int ioThreads, int networkThreads,
                               double logCleanTarget, boolean logDirectIo, long checkpointMillis) {
        this(nodeId, dataDir, listen, port, zk, segmentSize, chain, tailLayout, zkSessionTimeoutMs, background, labels,
                heartbeatMillis, ioThreads, networkThreads, logCleanTarget, logDirectIo, checkpointMillis,
                MappingBudget.defaultLimit());
    }

    /** With the default checkpoint interval. */
    public StorageServerConfig(String nodeId, Path dataDir, String listen, int port, String zk, long segmentSize,
                               ChainLimits chain, TailLayout tailLayout, int zkSessionTimeoutMs, BackgroundRates background,
                               Map<String, String> labels, long heartbeatMillis, int ioThreads, int networkThreads,
                               double logCleanTarget, boolean logDirectIo) {
        this(nodeId, dataDir, listen, port, zk, segmentSize, chain, tailLayout, zkSessionTimeoutMs, background, labels,
                heartbeatMillis, ioThreads, networkThreads, logCleanTarget, logDirectIo, DEFAULT_CHECKPOINT_MS);
    }

    /** The checkpoint interval as a duration. */
    public Duration checkpointInterval() {
        return Duration.ofMillis(checkpointMillis);
    }

    /**
     * Whether the tail writes its log around the page cache ({@code --log-direct-io}, default true; see
     * AlignedAppender): each batch is forced before it is acknowledged, so the page cache's copy
     * only cost CPU. Measured side by side on 2 vCPUs (docs/performance.md): 4 KiB QD1 random writes'
     * p50 -14% (4 of 4 rounds), QD32 random and 1 MiB writes unchanged within the noise. Where the
     * filesystem has no O_DIRECT (tmpfs) the log is written through the cache whatever this says.
     */
    public static final boolean DEFAULT_LOG_DIRECT_IO = true;

    /** With the log written around the page cache where the filesystem allows. */
    public StorageServerConfig(String nodeId, Path dataDir, String listen, int port, String zk, long segmentSize,
                               ChainLimits chain, TailLayout tailLayout, int zkSessionTimeoutMs, BackgroundRates background,
                               Map<String, String> labels, long heartbeatMillis, int ioThreads, int networkThreads,
                               double logCleanTarget) {
        this(nodeId, dataDir, listen, port, zk, segmentSize, chain, tailLayout, zkSessionTimeoutMs, background, labels,
                heartbeatMillis, ioThreads, networkThreads, logCleanTarget, DEFAULT_LOG_DIRECT_IO);
    }

    /** With the default log cleaning target. */
    public StorageServerConfig(String nodeId, Path dataDir, String listen, int port, String zk, long segmentSize,
                               ChainLimits chain, TailLayout tailLayout, int zkSessionTimeoutMs, BackgroundRates background,
                               Map<String, String> labels, long heartbeatMillis, int ioThreads, int networkThreads) {
        this(nodeId, dataDir, listen, port, zk, segmentSize, chain, tailLayout, zkSessionTimeoutMs, background, labels,
                heartbeatMillis, ioThreads, networkThreads, DEFAULT_LOG_CLEAN_TARGET);
    }

    /** The cleaner's settings for this server: the defaults with {@link #logCleanTarget}. */
    public LogCleaner.Settings cleanerSettings() {
        return LogCleaner.Settings.DEFAULTS.withTarget(logCleanTarget);
    }

    /** With the default numbers of chunk I/O threads and network event loops. */
    public StorageServerConfig(String nodeId, Path dataDir, String listen, int port, String zk, long segmentSize,
                               ChainLimits chain, TailLayout tailLayout, int zkSessionTimeoutMs, BackgroundRates background,
                               Map<String, String> labels, long heartbeatMillis) {
        this(nodeId, dataDir, listen, port, zk, segmentSize, chain, tailLayout, zkSessionTimeoutMs, background, labels,
                heartbeatMillis, DEFAULT_IO_THREADS, DEFAULT_NETWORK_THREADS);
    }

    /** Without failure-domain labels (the node is its own host and rack), heartbeat at the default period. */
    public StorageServerConfig(String nodeId, Path dataDir, String listen, int port, String zk, long segmentSize,
                               ChainLimits chain, TailLayout tailLayout, int zkSessionTimeoutMs,
                               BackgroundRates background) {
        this(nodeId, dataDir, listen, port, zk, segmentSize, chain, tailLayout, zkSessionTimeoutMs, background, Map.of(),
                DEFAULT_HEARTBEAT_MS);
    }

    public StorageServerConfig(String nodeId, Path dataDir, String listen, int port, String zk, long segmentSize,
                               ChainLimits chain, TailLayout tailLayout, int zkSessionTimeoutMs) {
        this(nodeId, dataDir, listen, port, zk, segmentSize, chain, tailLayout, zkSessionTimeoutMs, BackgroundRates.DEFAULTS);
    }

    public StorageServerConfig(String nodeId, Path dataDir, String listen, int port, String zk, long segmentSize,
                               ChainLimits chain, TailLayout tailLayout) {
        this(nodeId, dataDir, listen, port, zk, segmentSize, chain, tailLayout, DEFAULT_ZK_SESSION_TIMEOUT_MS);
    }

    public StorageServerConfig(String nodeId, Path dataDir, String listen, int port, String zk, long segmentSize,
                               ChainLimits chain) {
        this(nodeId, dataDir, listen, port, zk, segmentSize, chain, DEFAULT_TAIL_LAYOUT);
    }

    /** With the default chain limits. */
    public StorageServerConfig(String nodeId, Path dataDir, String listen, int port, String zk, long segmentSize) {
        this(nodeId, dataDir, listen, port, zk, segmentSize, ChainLimits.DEFAULTS, DEFAULT_TAIL_LAYOUT);
    }

    /** What {@code --help} says of each flag; the defaults are added from the parse itself. */
    static final Map<String, String> FLAGS = Map.ofEntries(
            Map.entry("node-id", "this node's id; kept in <data-dir>/node-id and checked against it at every start"
                    + " (default: the one recorded there, else generated)"),
            Map.entry("data-dir", "where the node keeps its chunk files, log segments and index"),
            Map.entry("listen", "address the chain and gateway connections are accepted on"),
            Map.entry("port", "TCP port for them"),
            Map.entry("zk", "ZooKeeper connect string"),
            Map.entry("segment-size", "size of a log segment, the unit the log cleaner frees"),
            Map.entry("sent-max-writes", "writes a group holds forwarded and not yet acknowledged before new ones wait"),
            Map.entry("sent-max-bytes", "payload bytes of such writes before new ones wait"),
            Map.entry("ack-timeout-ms", "how long a write may wait for its successor's acknowledgement, resends included, before it fails"),
            Map.entry("link-retry-ms", "after a failed forward with no chain change, the wait before resending on a new connection"),
            Map.entry("copy-piece", "bytes per copy request while a replica catches up, at least 4K"),
            Map.entry("tail-layout", "log (FAST: the tail writes only its log) or log+in-place"),
            Map.entry("zk-session-timeout-ms", "ZooKeeper session timeout: how soon a dead node leaves its chains"),
            Map.entry("copy-rate", "bytes per second for copying replicas to joining nodes, 0 unlimited"),
            Map.entry("log-scrub-rate", "bytes per second the log scrubber checks, 0 off"),
            Map.entry("log-scrub-pause-ms", "pause between two passes of the log scrubber"),
            Map.entry("scrub-rate", "bytes per second the chunk scrubber checks, 0 off"),
            Map.entry("scrub-pause-ms", "pause between two passes of the chunk scrubber"),
            Map.entry("host-label", "the host this node runs on, for placement (replicas of a chunk on distinct hosts)"),
            Map.entry("rack-label", "the rack, for placement (replicas on distinct racks where there are enough)"),
            Map.entry("heartbeat-ms", "how often free space and queue depths are published, at least 100"),
            Map.entry("io-threads", "chunk I/O threads (stripes), 1.." + MAX_IO_THREADS),
            Map.entry("network-threads", "network event loops, 1.." + MAX_NETWORK_THREADS),
            Map.entry("log-clean-target", "the log cleaner copies segments out while live / on-disk bytes of the log"
                    + " is below this share, as 0.5 or 50% (below half of it while writes are busy)"),
            Map.entry("log-direct-io", "write the tail's log around the page cache (O_DIRECT) where the filesystem allows"),
            Map.entry("checkpoint-ms", "how often head and middle force their dirty chunk files and record the checkpoint"
                    + " (after a power loss they re-fetch from the tail what was written since), at least " + MIN_CHECKPOINT_MS),
            Map.entry("mapped-chunks", "chunk files kept mapped for large reads from the page cache, the least recently read"
                    + " unmapped first; 0 for none (default: a sixteenth of vm.max_map_count)"));

    public static StorageServerConfig fromArgs(String... args) {
        return from(CommandLine.parse(args));
    }

    /** The text {@code --help} prints, listing every flag {@link #fromArgs} reads. */
    public static String usage(String synopsis) {
        return CommandLine.usage(StorageServerConfig::from, synopsis, FLAGS);
    }

    static StorageServerConfig from(CommandLine cl) {
        String nodeId = cl.get("node-id", null);
        Path dataDir = Path.of(cl.get("data-dir", "./var/storage-1"));
        String listen = cl.get("listen", "127.0.0.1");
        int port = cl.getInt("port", Ports.STORAGE_FIRST);
        String zk = cl.get("zk", "127.0.0.1:" + Ports.ZOOKEEPER);
        long segmentSize = cl.getBytes("segment-size", DEFAULT_SEGMENT_SIZE);
        ChainLimits d = ChainLimits.DEFAULTS;
        int sentMaxWrites = cl.getInt("sent-max-writes", d.sentMaxWrites());
        long sentMaxBytes = cl.getBytes("sent-max-bytes", d.sentMaxBytes());
        long ackTimeout = cl.getLong("ack-timeout-ms", d.ackTimeoutMillis());
        long linkRetry = cl.getLong("link-retry-ms", d.linkRetryMillis());
        int copyPiece = (int) Math.min(Integer.MAX_VALUE, cl.getBytes("copy-piece", d.copyPieceBytes()));
        TailLayout tailLayout = TailLayout.fromFlag(cl.get("tail-layout", DEFAULT_TAIL_LAYOUT.flag()));
        int zkSessionTimeoutMs = cl.getInt("zk-session-timeout-ms", DEFAULT_ZK_SESSION_TIMEOUT_MS);
        BackgroundRates b = BackgroundRates.DEFAULTS;
        String copyRate = cl.given("copy-rate", rateText(b.copyBytesPerSecond()));
        String logScrubRate = cl.given("log-scrub-rate", rateText(b.logScrubBytesPerSecond()));
        String scrubRate = cl.given("scrub-rate", rateText(b.scrubBytesPerSecond()));
        BackgroundRates background = new BackgroundRates(
                copyRate == null ? b.copyBytesPerSecond() : rate("copy-rate", copyRate),
                logScrubRate == null ? b.logScrubBytesPerSecond() : rate("log-scrub-rate", logScrubRate),
                cl.getLong("log-scrub-pause-ms", b.logScrubPauseMillis()),
                scrubRate == null ? b.scrubBytesPerSecond() : rate("scrub-rate", scrubRate),
                cl.getLong("scrub-pause-ms", b.scrubPauseMillis()));
        // Failure domains for placement: replicas of a chunk go to distinct racks, else distinct hosts.
        Map<String, String> labels = new TreeMap<>();
        String host = cl.get("host-label", "");
        String rack = cl.get("rack-label", "");
        if (!host.isEmpty()) {
            labels.put(NodeRecord.LABEL_HOST, host);
        }
        if (!rack.isEmpty()) {
            labels.put(NodeRecord.LABEL_RACK, rack);
        }
        long heartbeatMs = cl.getLong("heartbeat-ms", DEFAULT_HEARTBEAT_MS);
        int ioThreads = cl.getInt("io-threads", DEFAULT_IO_THREADS);
        int networkThreads = cl.getInt("network-threads", DEFAULT_NETWORK_THREADS);
        double logCleanTarget = cl.getShare("log-clean-target", DEFAULT_LOG_CLEAN_TARGET);
        boolean logDirectIo = cl.getBoolean("log-direct-io", DEFAULT_LOG_DIRECT_IO);
        long checkpointMs = cl.getLong("checkpoint-ms", DEFAULT_CHECKPOINT_MS);
        int mappedChunks = cl.getInt("mapped-chunks", MappingBudget.defaultLimit());
        cl.rejectUnknown();
        ChainLimits chain;
        try {
            chain = new ChainLimits(sentMaxWrites, sentMaxBytes, ackTimeout, linkRetry, copyPiece);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--sent-max-writes, --sent-max-bytes, --ack-timeout-ms and --link-retry-ms must be"
                    + " positive and --copy-piece at least 4K: " + e.getMessage());
        }
        return new StorageServerConfig(nodeId, dataDir, listen, port, zk, segmentSize, chain, tailLayout,
                zkSessionTimeoutMs, background, labels, heartbeatMs, ioThreads, networkThreads, logCleanTarget, logDirectIo,
                checkpointMs, mappedChunks);
    }

    private static String rateText(long bytesPerSecond) {
        return bytesPerSecond == 0 ? "0" : ByteSize.format(bytesPerSecond);
    }

    /** A byte rate per second: a size, or 0 (unlimited for copies, off for the scrubber). */
    private static long rate(String name, String text) {
        return ByteSize.parseOrZero(name, text);
    }

    public StorageServerConfig withPort(int newPort) {
        return new StorageServerConfig(nodeId, dataDir, listen, newPort, zk, segmentSize, chain, tailLayout,
                zkSessionTimeoutMs, background, labels, heartbeatMillis, ioThreads, networkThreads, logCleanTarget, logDirectIo,
                checkpointMillis, mappedChunks);
    }

    public StorageServerConfig withBackground(BackgroundRates rates) {
        return new StorageServerConfig(nodeId, dataDir, listen, port, zk, segmentSize, chain, tailLayout,
                zkSessionTimeoutMs, rates, labels, heartbeatMillis, ioThreads, networkThreads, logCleanTarget, logDirectIo,
                checkpointMillis, mappedChunks);
    }
}
