package io.fastblock.bench.chain;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.fastblock.bench.Units;
import io.fastblock.protocol.config.CommandLine;
import io.fastblock.storage.StorageMetrics;
import io.fastblock.storage.StorageServerConfig;
import io.fastblock.storage.chain.TailLayout;
import io.fastblock.storage.net.NettyTransport;
import io.fastblock.storage.net.StorageClient;
import io.netty.channel.EventLoopGroup;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The storage benchmark of issue 3: 4 KiB random and 1 MiB sequential writes and reads at queue
 * depth 32 through a 3-node chain over the storage protocol (no iSCSI), alternating run by run
 * with fio on a raw file in the same directory (so on the same disk), and the tail's acknowledged
 * writes per log fsync. Prints a Markdown table of medians and ratios to raw.
 *
 * <pre>java -cp bench/target/fastblock-bench.jar io.fastblock.bench.chain.ChainBenchmark --dir=var/bench-chain</pre>
 */
public final class ChainBenchmark {
    /** Settings; {@code layouts} are the tail layouts to measure, one chain each. */
    public record Settings(Path dir, long span, long rampNanos, long runtimeNanos, int rounds, List<TailLayout> layouts,
                           String fio, Path json, boolean keep, List<StorageWorkload> workloads) {
        public Settings(Path dir, long span, long rampNanos, long runtimeNanos, int rounds, List<TailLayout> layouts,
                        String fio, Path json, boolean keep) {
            this(dir, span, rampNanos, runtimeNanos, rounds, layouts, fio, json, keep, StorageWorkload.STANDARD);
        }

        public Settings {
            if (workloads.isEmpty()) {
                throw new IllegalArgumentException("--workloads names none of " + names(StorageWorkload.STANDARD));
            }
            workloads = List.copyOf(workloads);
            if (rounds < 1) {
                throw new IllegalArgumentException("--rounds must be at least 1, got " + rounds);
            }
            if (span < (32L << 20) || span % ChainLoad.CHUNK_BYTES != 0) {
                throw new IllegalArgumentException("--span must be a multiple of 16M and at least 32M, got " + span);
            }
            if (runtimeNanos <= 0) {
                throw new IllegalArgumentException("--runtime must be positive");
            }
            layouts = List.copyOf(layouts);
        }

        public static Settings fromArgs(String... args) {
            CommandLine cl = CommandLine.parse(args);
            Path dir = Path.of(cl.get("dir", "var/bench-chain"));
            long span = Units.parseSize("--span", cl.get("span", "256M"));
            long ramp = Units.parseDurationNanos("--ramp", cl.get("ramp", "2s"));
            long runtime = Units.parseDurationNanos("--runtime", cl.get("runtime", "10s"));
            int rounds = cl.getInt("rounds", 3);
            String layout = cl.get("tail-layout", StorageServerConfig.DEFAULT_TAIL_LAYOUT.flag());
            List<TailLayout> layouts = layout.equals("both") ? List.of(TailLayout.LOG_AND_IN_PLACE, TailLayout.LOG)
                    : List.of(TailLayout.fromFlag(layout));
            String fio = cl.get("fio", "fio");
            String json = cl.get("json", null);
            boolean keep = cl.getBoolean("keep", false);
            String only = cl.get("workloads", null);
            cl.rejectUnknown();
            List<StorageWorkload> workloads = StorageWorkload.STANDARD;
            if (only != null) {
                List<String> wanted = List.of(only.split(","));
                for (String w : wanted) {
                    if (StorageWorkload.STANDARD.stream().noneMatch(x -> x.name().equals(w))) {
                        throw new IllegalArgumentException("--workloads: unknown workload '" + w + "', known: "
                                + names(StorageWorkload.STANDARD));
                    }
                }
                workloads = StorageWorkload.STANDARD.stream().filter(x -> wanted.contains(x.name())).toList();
            }
            return new Settings(dir, span, ramp, runtime, rounds, layouts, fio, json == null ? null : Path.of(json), keep,
                    workloads);
        }

        private static String names(List<StorageWorkload> ws) {
            return String.join(",", ws.stream().map(StorageWorkload::name).toList());
        }
    }

    /** One workload's runs on one layout, chain and raw side by side (round i of each ran back to back). */
    public record Comparison(String layout, StorageWorkload workload, List<RunResult> chain, List<RunResult> raw,
                             double writesPerFsync) {
        public double chainIops() {
            return median(chain.stream().map(RunResult::iops).toList());
        }

        public double rawIops() {
            return median(raw.stream().map(RunResult::iops).toList());
        }

        /** Chain over raw, from the medians of the rounds. */
        public double ratio() {
            double raw = rawIops();
            return raw == 0 ? 0 : chainIops() / raw;
        }

        public long chainErrors() {
            return chain.stream().mapToLong(RunResult::errors).sum();
        }
    }

    static double median(List<Double> values) {
        List<Double> sorted = values.stream().sorted().toList();
        int n = sorted.size();
        return n == 0 ? 0 : n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    public static List<Comparison> run(Settings s, PrintStream progress) throws Exception {
        Files.createDirectories(s.dir());
        FioRun fio = new FioRun(s.fio(), s.dir().resolve("raw.dat"), s.span());
        List<Comparison> all = new ArrayList<>();
        EventLoopGroup loop = NettyTransport.group(1, "bench-client");
        try {
            progress.println("laying out the raw file (" + Units.formatSize(s.span()) + ")");
            fio.fill();
            for (TailLayout layout : s.layouts()) {
                Path chainDir = s.dir().resolve("chain-" + layout.flag().replace('+', '-'));
                deleteTree(chainDir);
                try (LocalChain chain = LocalChain.start(chainDir, layout);
                     StorageClient head = StorageClient.connect(loop, chain.head().host(), chain.head().port())
                             .awaitConnected(10, TimeUnit.SECONDS)) {
                    ChainLoad load = new ChainLoad(head, LocalChain.CHAIN, 1, s.span());
                    progress.println("tail layout " + layout.flag() + ": filling the chain's volume");
                    load.fill();
                    StorageMetrics tail = chain.tail().metrics();
                    for (StorageWorkload w : s.workloads()) {
                        List<RunResult> chainRuns = new ArrayList<>();
                        List<RunResult> rawRuns = new ArrayList<>();
                        double appends = 0;
                        double fsyncs = 0;
                        for (int round = 0; round < s.rounds(); round++) {
                            // A/B alternation: whichever goes first in one round goes second in the next.
                            boolean chainFirst = round % 2 == 0;
                            for (int side = 0; side < 2; side++) {
                                if ((side == 0) == chainFirst) {
                                    double a0 = tail.logAppends.count();
                                    double f0 = tail.logFsyncs.count();
                                    double ft0 = tail.logFsyncTime.totalTime(TimeUnit.MICROSECONDS);
                                    double c0 = tail.logCommitTime.count();
                                    double ct0 = tail.logCommitTime.totalTime(TimeUnit.MICROSECONDS);
                                    RoleLatency roles = new RoleLatency(chain.servers());
                                    RunResult r = load.run(w, s.rampNanos(), s.runtimeNanos());
                                    double da = tail.logAppends.count() - a0;
                                    double df = tail.logFsyncs.count() - f0;
                                    double dc = tail.logCommitTime.count() - c0;
                                    appends += da;
                                    fsyncs += df;
                                    chainRuns.add(r);
                                    progress.printf(Locale.ROOT, "  %s %-13s round %d chain %10.0f IOPS %8.1f MB/s",
                                            layout.flag(), w.name(), round + 1, r.iops(), r.megabytesPerSecond());
                                    if (w.write() && df > 0) {
                                        progress.printf(Locale.ROOT, "  tail: %.1f writes/fsync, fsync %.0f µs, commit %.0f µs",
                                                da / df, (tail.logFsyncTime.totalTime(TimeUnit.MICROSECONDS) - ft0) / df,
                                                dc == 0 ? 0 : (tail.logCommitTime.totalTime(TimeUnit.MICROSECONDS) - ct0) / dc);
                                        progress.print("; " + roles.since());
                                    }
                                    progress.println();
                                } else {
                                    RunResult r = fio.run(w, s.rampNanos(), s.runtimeNanos());
                                    rawRuns.add(r);
                                    progress.printf(Locale.ROOT, "  %s %-13s round %d raw   %10.0f IOPS %8.1f MB/s%n",
                                            layout.flag(), w.name(), round + 1, r.iops(), r.megabytesPerSecond());
                                }
                            }
                        }
                        all.add(new Comparison(layout.flag(), w, chainRuns, rawRuns, fsyncs == 0 ? 0 : appends / fsyncs));
                    }
                }
                if (!s.keep()) {
                    deleteTree(chainDir);
                }
            }
        } finally {
            loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
            if (!s.keep()) {
                fio.delete();
            }
        }
        return all;
    }

    /** The Markdown table of the results. */
    public static String table(List<Comparison> results) {
        StringBuilder b = new StringBuilder();
        b.append("| tail layout | workload | chain IOPS | chain MB/s | chain p50 / p99 µs | raw IOPS | raw MB/s | raw p50 / p99 µs"
                + " | chain / raw | writes per fsync |\n");
        b.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (Comparison c : results) {
            RunResult chain = medianRun(c.chain());
            RunResult raw = medianRun(c.raw());
            b.append(String.format(Locale.ROOT, "| %s | %s | %.0f | %.1f | %d / %d | %.0f | %.1f | %d / %d | %.2f | %s |%n",
                    c.layout(), c.workload().name(), c.chainIops(), c.chainIops() * c.workload().blockSize() / 1e6,
                    chain.p50Micros(), chain.p99Micros(), c.rawIops(), c.rawIops() * c.workload().blockSize() / 1e6,
                    raw.p50Micros(), raw.p99Micros(), c.ratio(),
                    c.workload().write() ? String.format(Locale.ROOT, "%.1f", c.writesPerFsync()) : "-"));
        }
        return b.toString();
    }

    /** The run with the median IOPS (its latencies are shown). */
    private static RunResult medianRun(List<RunResult> runs) {
        List<RunResult> sorted = runs.stream().sorted(Comparator.comparingDouble(RunResult::iops)).toList();
        return sorted.get(sorted.size() / 2);
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    public static void main(String[] args) {
        Settings s;
        try {
            s = Settings.fromArgs(args);
        } catch (IllegalArgumentException e) {
            System.err.println("chain-benchmark: " + e.getMessage());
            System.exit(2);
            return;
        }
        try {
            List<Comparison> results = run(s, System.out);
            System.out.println();
            System.out.print(table(results));
            if (s.json() != null) {
                Map<String, Object> doc = new LinkedHashMap<>();
                doc.put("settings", Map.of("span", s.span(), "rampNanos", s.rampNanos(), "runtimeNanos", s.runtimeNanos(),
                        "rounds", s.rounds()));
                doc.put("results", results);
                new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(s.json().toFile(), doc);
            }
            long errors = results.stream().mapToLong(Comparison::chainErrors).sum();
            if (errors > 0) {
                System.err.println("chain-benchmark: " + errors + " chain requests failed");
                System.exit(1);
            }
            System.exit(0);
        } catch (Exception e) {
            System.err.println("chain-benchmark: " + e);
            e.printStackTrace();
            System.exit(1);
        }
    }
}
