package io.fastblock.bench.log;

import io.fastblock.bench.Units;
import io.fastblock.protocol.ChunkId;
import io.fastblock.protocol.config.CommandLine;
import io.fastblock.storage.StorageMetrics;
import io.fastblock.storage.log.LogCleaner;
import io.fastblock.storage.log.LogStore;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;

/**
 * What the log cleaner costs per byte it moves, on the workload that made it expensive: a chunk
 * prefilled with 1 MiB writes, then random 4 KiB overwrites (a prefilled volume under a random
 * write benchmark), then cleaning passes on the calling thread. Prints the cleaner thread's CPU
 * per moved MiB (the commit thread's work for the moved records is not in it). Compare two builds
 * by running it on each, alternating.
 *
 * <pre>java -cp bench/target/fastblock-bench.jar io.fastblock.bench.log.CleanerBenchmark --dir=/var/tmp/cleaner-bench</pre>
 */
public final class CleanerBenchmark {
    /** Settings: {@code prefill} bytes in 1 MiB records, then {@code overwrites} random 4 KiB writes over them. */
    public record Settings(Path dir, long prefill, int overwrites, int passes, long segmentSize) {
        public Settings {
            if (prefill < (1 << 20) || prefill % (1 << 20) != 0) {
                throw new IllegalArgumentException("--prefill must be a positive multiple of 1M, got " + prefill);
            }
            if (overwrites < 1 || passes < 1) {
                throw new IllegalArgumentException("--overwrites and --passes must be at least 1");
            }
        }

        public static Settings fromArgs(String... args) {
            CommandLine cl = CommandLine.parse(args);
            Path dir = Path.of(cl.get("dir", "var/bench-cleaner"));
            long prefill = Units.parseSize("--prefill", cl.get("prefill", "256M"));
            int overwrites = cl.getInt("overwrites", 60_000);
            int passes = cl.getInt("passes", 6);
            long segment = Units.parseSize("--segment-size", cl.get("segment-size", "64M"));
            cl.rejectUnknown();
            return new Settings(dir, prefill, overwrites, passes, segment);
        }
    }

    /** One run's figures. */
    public record Result(int segmentsFreed, double movedBytes, long cleanerCpuNanos, long wallNanos) {
        public double cpuMillisPerMovedMiB() {
            return movedBytes == 0 ? 0 : cleanerCpuNanos / 1e6 / (movedBytes / (1 << 20));
        }
    }

    private CleanerBenchmark() {
    }

    public static Result run(Settings s) throws IOException {
        Files.createDirectories(s.dir());
        Path dir = Files.createTempDirectory(s.dir(), "log");
        ChunkId chunk = new ChunkId(1, 0);
        try (LogStore store = LogStore.open(dir, s.segmentSize(), new StorageMetrics())) {
            Random random = new Random(1);
            byte[] big = new byte[1 << 20];
            random.nextBytes(big);
            List<CompletableFuture<Void>> pending = new ArrayList<>();
            long sequence = 0;
            for (long off = 0; off < s.prefill(); off += big.length) {
                pending.add(store.append(chunk, off, ++sequence, Unpooled.wrappedBuffer(big)));
                drainAt(pending, 8);
            }
            drainAt(pending, 1);
            byte[] small = new byte[4096];
            random.nextBytes(small);
            long blocks = s.prefill() / small.length;
            for (int i = 0; i < s.overwrites(); i++) {
                pending.add(store.append(chunk, small.length * (long) random.nextInt((int) blocks), ++sequence,
                        Unpooled.wrappedBuffer(small)));
                drainAt(pending, 32);
            }
            drainAt(pending, 1);
            // Clean eagerly: the default pacing would measure the sleeps.
            LogCleaner cleaner = new LogCleaner(store, new LogCleaner.Settings(0.95, 0.99, 0, 1.0, 256 << 10, 5));
            ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            double moved0 = store.logMetrics().cleanerBytesMoved.count();
            long cpu0 = threads.getCurrentThreadCpuTime();
            long wall0 = System.nanoTime();
            int freed = 0;
            for (int i = 0; i < s.passes(); i++) {
                freed += cleaner.cleanOnce();
            }
            long cpu = threads.getCurrentThreadCpuTime() - cpu0;
            long wall = System.nanoTime() - wall0;
            return new Result(freed, store.logMetrics().cleanerBytesMoved.count() - moved0, cpu, wall);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        } finally {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private static void drainAt(List<CompletableFuture<Void>> pending, int limit) {
        if (pending.size() >= limit) {
            CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).join();
            pending.clear();
        }
    }

    public static void print(Result r, PrintStream out) {
        out.printf("freed %d segments, moved %.1f MiB; cleaner thread CPU %.0f ms (%.1f ms per moved MiB), wall %.0f ms%n",
                r.segmentsFreed(), r.movedBytes() / (1 << 20), r.cleanerCpuNanos() / 1e6, r.cpuMillisPerMovedMiB(),
                r.wallNanos() / 1e6);
    }

    public static void main(String[] args) throws IOException {
        Settings s;
        try {
            s = Settings.fromArgs(args);
        } catch (IllegalArgumentException e) {
            System.err.println("cleaner-benchmark: " + e.getMessage());
            System.exit(2);
            return;
        }
        print(run(s), System.out);
    }
}
