package io.fastblock.gateway;

import io.fastblock.protocol.Ports;
import io.fastblock.protocol.config.ByteSize;
import io.fastblock.protocol.config.CommandLine;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Everything a gateway can be told, with defaults for one machine.
 *
 * @param listenHost     address the iSCSI portal binds (127.0.0.1 by default: never exposed by accident)
 * @param iscsiPort      TCP port of the portal
 * @param portalAddress  address advertised in SendTargets (host:port), defaults to listenHost:iscsiPort
 * @param namenodeUrls   base URLs of the namenodes (http://host:port), tried in order
 * @param queueDepth     commands a session may have outstanding (the CmdSN window)
 * @param timers         the gateway's timers
 * @param dataMemory     {@code --data-memory}: bytes of command data (solicited write data, read data on
 *                       its way out) all sessions may hold at once ({@code iscsi.session.DataBudget});
 *                       by default half the JVM's direct memory limit
 * @param readAhead      {@code --read-ahead}: bytes each storage read fetches ahead of a volume's small
 *                       sequential reads ({@code client.ReadAhead}), 0 for none (default 128K)
 * @param chunkMapEntries {@code --chunk-map-entries}: chunk routes all open volumes together keep cached
 *                       ({@code client.ChunkMapBudget}); past it the oldest is dropped and asked for again
 *                       when next used (default 262144: 16 TiB of 64 MiB chunks, 22 MiB of heap measured when full)
 * @param metricsPort    {@code --metrics-port}: TCP port on {@code listenHost} of {@code GET /metrics} (the
 *                       gateway's and its JVM's meters in Prometheus' text format); 0, the default, serves none
 */
public record GatewayConfig(String listenHost, int iscsiPort, String portalAddress, List<String> namenodeUrls,
                            int queueDepth, Timers timers, long dataMemory, int readAhead, int chunkMapEntries,
                            int metricsPort) {
    /** Default {@code --read-ahead}: 32 reads of 4 KiB per storage request. */
    public static final int DEFAULT_READ_AHEAD = 128 << 10;
    /** Smallest non-zero {@code --read-ahead}: sequential reads of up to a quarter of it trigger it. */
    public static final int MIN_READ_AHEAD = 16 << 10;
    /** Largest {@code --read-ahead}: one storage request. */
    public static final int MAX_READ_AHEAD = 1 << 20;

    /** Smallest {@code --chunk-map-entries}: fewer would send most I/O of a few busy volumes to the namenode. */
    public static final int MIN_CHUNK_MAP_ENTRIES = 1024;
    /** Largest {@code --chunk-map-entries}: about 22 GiB of heap when full. */
    public static final int MAX_CHUNK_MAP_ENTRIES = 1 << 28;

    /** Smallest {@code --data-memory}: one 1 MiB command at a time. */
    public static final long MIN_DATA_MEMORY = 1L << 20;

    /** Half the direct memory Netty may use in this JVM (256 MiB of it by default for a 256 MiB heap). */
    public static long defaultDataMemory() {
        return Math.max(MIN_DATA_MEMORY, io.netty.util.internal.PlatformDependent.maxDirectMemory() / 2);
    }

    public GatewayConfig {
        if (dataMemory < MIN_DATA_MEMORY) {
            throw new IllegalArgumentException("--data-memory must be at least 1M, got " + dataMemory);
        }
        if (readAhead != 0 && (readAhead < MIN_READ_AHEAD || readAhead > MAX_READ_AHEAD || readAhead % 4096 != 0)) {
            throw new IllegalArgumentException("--read-ahead must be 0 or a multiple of 4K in "
                    + MIN_READ_AHEAD / 1024 + "K.." + MAX_READ_AHEAD / 1024 + "K, got " + readAhead);
        }
        if (metricsPort < 0 || metricsPort > 65535) {
            throw new IllegalArgumentException("--metrics-port must be 0..65535 (0: no metrics endpoint), got "
                    + metricsPort);
        }
        checkChunkMapEntries(chunkMapEntries);
    }

    private static int checkChunkMapEntries(long entries) {
        if (entries < MIN_CHUNK_MAP_ENTRIES || entries > MAX_CHUNK_MAP_ENTRIES) {
            throw new IllegalArgumentException("--chunk-map-entries must be " + MIN_CHUNK_MAP_ENTRIES + ".."
                    + MAX_CHUNK_MAP_ENTRIES + ", got " + entries);
        }
        return (int) entries;
    }

    /**
     * The gateway's timers (flags take a number with a unit: {@code 500ms}, {@code 4s}, {@code 1m}).
     *
     * @param requestTimeout {@code --request-timeout}: how long one attempt of a storage request may
     *                       go unanswered before it is retried (default 4 s)
     * @param retryBudget    {@code --retry-budget}: how long a volume request keeps being retried
     *                       across chain repairs; must stay inside the initiator's abort timer (15 s for
     *                       open-iscsi) and hold two attempts (default 12 s)
     * @param nopInterval    {@code --nop-interval}: idle time after which an initiator is pinged with a
     *                       NOP-In (default 10 s)
     * @param nopTimeout     {@code --nop-timeout}: how long an unanswered NOP-In is waited for before
     *                       the connection is closed (default 10 s)
     * @param leaseRenewal   {@code --lease-renewal}: how often a held write lease is renewed; 0 means
     *                       a third of the lease's lifetime as the namenode grants it (default 0)
     * @param qosPoll        {@code --qos-poll}: how often an open volume's record (QoS, size, layers) is read again
     *                       from the namenode (default 2 s)
     * @param answerSpin     {@code --answer-spin}: how long at most an iSCSI event loop whose only work is one
     *                       or two awaited storage answers, for at most two initiators' commands, polls for them
     *                       before it sleeps (client.AnswerSpin;
     *                       each poll adapts to how long answers take, from 50 µs); 0 turns polling off
     *                       (default 200us)
     */
    public record Timers(Duration requestTimeout, Duration retryBudget, Duration nopInterval, Duration nopTimeout,
                         Duration leaseRenewal, Duration qosPoll, Duration answerSpin) {
        public static final Timers DEFAULTS = new Timers(Duration.ofSeconds(4), Duration.ofSeconds(12),
                Duration.ofSeconds(10), Duration.ofSeconds(10), Duration.ZERO, Duration.ofSeconds(2),
                Duration.ofNanos(io.fastblock.gateway.client.AnswerSpin.DEFAULT_SPIN_NANOS));

        public Timers {
            positive("--request-timeout", requestTimeout);
            positive("--retry-budget", retryBudget);
            positive("--nop-interval", nopInterval);
            positive("--nop-timeout", nopTimeout);
            positive("--qos-poll", qosPoll);
            if (leaseRenewal.isNegative()) {
                throw new IllegalArgumentException("--lease-renewal must be >= 0 (0: a third of the lease), got "
                        + leaseRenewal);
            }
            if (answerSpin.isNegative() || answerSpin.compareTo(Duration.ofMillis(1)) > 0) {
                throw new IllegalArgumentException("--answer-spin must be 0..1ms (0: off), got " + format(answerSpin));
            }
            if (requestTimeout.multipliedBy(2).compareTo(retryBudget) > 0) {
                throw new IllegalArgumentException("--request-timeout (" + format(requestTimeout)
                        + ") must fit twice in --retry-budget (" + format(retryBudget) + ")");
            }
        }

        private static void positive(String flag, Duration d) {
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(flag + " must be positive, got " + format(d));
            }
        }
    }

    public static GatewayConfig defaults() {
        return fromArgs();
    }

    /** What {@code --help} says of each flag; the defaults are added from the parse itself. */
    static final java.util.Map<String, String> FLAGS = java.util.Map.ofEntries(
            java.util.Map.entry("listen", "address the iSCSI portal binds"),
            java.util.Map.entry("port", "TCP port of the portal"),
            java.util.Map.entry("portal", "address SendTargets advertises, host:port"),
            java.util.Map.entry("namenode", "base URLs of the namenodes, comma-separated, tried in order"),
            java.util.Map.entry("queue-depth", "commands a session may have outstanding (the CmdSN window), 1..4096"),
            java.util.Map.entry("data-memory", "bytes of command data all sessions may hold at once"
                    + " (default: half the JVM's direct memory limit)"),
            java.util.Map.entry("request-timeout", "how long one attempt of a storage request may go unanswered"
                    + " before it is retried"),
            java.util.Map.entry("retry-budget", "how long a volume request keeps being retried across chain repairs;"
                    + " keep it inside the initiator's abort timer (15s for open-iscsi)"),
            java.util.Map.entry("nop-interval", "idle time after which an initiator is pinged with a NOP-In"),
            java.util.Map.entry("nop-timeout", "how long an unanswered NOP-In is waited for before the connection closes"),
            java.util.Map.entry("lease-renewal", "how often a held write lease is renewed; 0: a third of its lifetime"),
            java.util.Map.entry("qos-poll", "how often an open volume's record (QoS, size, layers) is read again"),
            java.util.Map.entry("answer-spin", "how long an event loop awaiting one or two storage answers polls for"
                    + " them before it sleeps; 0: no polling"),
            java.util.Map.entry("read-ahead", "bytes each storage read fetches ahead of a volume's small sequential"
                    + " reads, 0: none"),
            java.util.Map.entry("metrics-port", "TCP port on the listen address of GET /metrics (Prometheus text"
                    + " format); 0: none"),
            java.util.Map.entry("chunk-map-entries", "chunk routes all open volumes together keep cached; past it the"
                    + " oldest is asked for again when next used"));

    public static GatewayConfig fromArgs(String... args) {
        return from(CommandLine.parse(args));
    }

    /** The text {@code --help} prints, listing every flag {@link #fromArgs} reads. */
    public static String usage() {
        return CommandLine.usage(GatewayConfig::from, "gateway [--name=value ...]  (durations: 50us, 500ms, 4s, 1m)", FLAGS);
    }

    static GatewayConfig from(CommandLine cl) {
        String host = cl.get("listen", "127.0.0.1");
        int port = cl.getInt("port", Ports.ISCSI);
        String portal = cl.get("portal", host + ":" + port);
        String urls = cl.get("namenode", "http://127.0.0.1:" + Ports.NAMENODE_HTTP);
        int qd = cl.getInt("queue-depth", 128);
        String mem = cl.given("data-memory", null);
        long dataMemory = mem == null ? defaultDataMemory() : ByteSize.parse("data-memory", mem);
        long readAhead = ByteSize.parseOrZero("read-ahead", cl.get("read-ahead", ByteSize.format(DEFAULT_READ_AHEAD)));
        int metricsPort = cl.getInt("metrics-port", 0);
        int chunkMapEntries = checkChunkMapEntries(
                cl.getLong("chunk-map-entries", io.fastblock.gateway.client.ChunkMapBudget.DEFAULT_LIMIT));
        Timers d = Timers.DEFAULTS;
        Timers timers = new Timers(duration(cl, "request-timeout", d.requestTimeout()),
                duration(cl, "retry-budget", d.retryBudget()), duration(cl, "nop-interval", d.nopInterval()),
                duration(cl, "nop-timeout", d.nopTimeout()), duration(cl, "lease-renewal", d.leaseRenewal()),
                duration(cl, "qos-poll", d.qosPoll()), duration(cl, "answer-spin", d.answerSpin()));
        cl.rejectUnknown();
        if (qd < 1 || qd > 4096) {
            throw new IllegalArgumentException("--queue-depth must be 1..4096, got " + qd);
        }
        return new GatewayConfig(host, port, portal,
                Arrays.stream(urls.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList(), qd, timers, dataMemory,
                (int) Math.min(readAhead, Integer.MAX_VALUE), chunkMapEntries, metricsPort);
    }

    private static Duration duration(CommandLine cl, String name, Duration defaultValue) {
        String v = cl.given(name, format(defaultValue));
        if (v == null) {
            return defaultValue;
        }
        try {
            return parseDuration(v);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--" + name + ": " + e.getMessage());
        }
    }

    /** {@code 50us}, {@code 250ms}, {@code 4s}, {@code 2m}; a bare {@code 0} is zero. */
    static Duration parseDuration(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        try {
            if (t.equals("0")) {
                return Duration.ZERO;
            }
            if (t.endsWith("us")) {
                return Duration.ofNanos(Math.multiplyExact(Long.parseLong(t.substring(0, t.length() - 2)), 1000L));
            }
            if (t.endsWith("ms")) {
                return Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2)));
            }
            if (t.endsWith("s")) {
                return Duration.ofSeconds(Long.parseLong(t.substring(0, t.length() - 1)));
            }
            if (t.endsWith("m")) {
                return Duration.ofMinutes(Long.parseLong(t.substring(0, t.length() - 1)));
            }
        } catch (NumberFormatException e) {
            // falls through to the error below
        }
        throw new IllegalArgumentException("expected a duration like 50us, 500ms, 4s or 1m, got '" + text + "'");
    }

    static String format(Duration d) {
        if (d.toNanos() % 1_000_000 != 0) {
            return d.toNanos() / 1000 + "us";
        }
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + "s" : d.toMillis() + "ms";
    }
}
