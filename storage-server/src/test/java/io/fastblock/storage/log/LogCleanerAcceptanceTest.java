package io.fastblock.storage.log;

import static io.fastblock.storage.log.LogFixture.read;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.StorageMetrics;
import io.netty.buffer.Unpooled;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 3's cleaner acceptance, at the log store with real files and fsync: overwrite the same
 * volume area 5 times (shuffled 64 KiB writes, 16 in flight) while the cleaner runs; reads
 * checked against a reference along the way; at the end the log's disk use is at most 1.3x the
 * live data and every byte reads back. The area is {@code -Dfastblock.cleaner.acceptance.bytes}
 * (default 256 MiB for {@code make test}; the 1 GiB is run by hand with
 * {@code -Dfastblock.cleaner.acceptance.bytes=1g}). Foreground write latency is measured (not
 * asserted) for a pass without the cleaner and for the passes with it, and printed.
 */
class LogCleanerAcceptanceTest {
    private static final int UNIT = 64 * 1024;
    private static final long CHUNK_SIZE = 64L << 20;
    private static final int PASSES = 5;
    private static final int DEPTH = 16;

    @TempDir
    Path dir;

    private static long areaBytes() {
        String v = System.getProperty("fastblock.cleaner.acceptance.bytes", "256m").trim().toLowerCase();
        long mult = v.endsWith("g") ? 1L << 30 : v.endsWith("m") ? 1L << 20 : 1;
        return Long.parseLong(v.replaceAll("[gm]$", "")) * mult;
    }

    /** The content of unit {@code u} as written by pass {@code version} (0: never written). */
    private static byte[] content(int u, int version) {
        byte[] b = new byte[UNIT];
        if (version > 0) {
            SplittableRandom r = new SplittableRandom(((long) u << 8) | version);
            for (int i = 0; i < UNIT; i += 8) {
                long x = r.nextLong();
                for (int k = 0; k < 8; k++) {
                    b[i + k] = (byte) (x >>> (8 * k));
                }
            }
        }
        return b;
    }

    private static ChunkId chunkOf(int u) {
        return new ChunkId(11, (long) u * UNIT / CHUNK_SIZE);
    }

    private static long offsetOf(int u) {
        return (long) u * UNIT % CHUNK_SIZE;
    }

    private record Done(int unit, long latencyNanos, Throwable error) {
    }

    @Test
    void overwritingTheSameArea5TimesComesBackToAtMost1point3xLiveData() throws Exception {
        long area = areaBytes();
        int units = (int) (area / UNIT);
        long segmentSize = Math.min(64L << 20, Math.max(1L << 20, area / 16));
        int[] version = new int[units];
        boolean[] inFlight = new boolean[units];
        StorageMetrics metrics = new StorageMetrics();
        Random pick = new Random(1);
        long started = System.nanoTime();
        long checkedReads = 0;
        List<long[]> latencies = new ArrayList<>();
        LogCleaner.Settings settings = new LogCleaner.Settings(0.85, 0.95, 256L << 20, 0.5, 256 << 10, 100);
        try (LogStore store = LogStore.open(dir, segmentSize, metrics);
             LogCleaner cleaner = new LogCleaner(store, settings)) {
            long peakDisk = 0;
            for (int pass = 1; pass <= PASSES; pass++) {
                if (pass == 3) {
                    cleaner.start(); // passes 1-2 measure the foreground alone
                }
                List<Integer> order = new ArrayList<>(units);
                for (int u = 0; u < units; u++) {
                    order.add(u);
                }
                Collections.shuffle(order, pick);
                long[] lat = new long[units];
                int completed = 0;
                int next = 0;
                BlockingQueue<Done> done = new ArrayBlockingQueue<>(DEPTH);
                while (completed < units) {
                    while (next < units && next - completed < DEPTH) {
                        int u = order.get(next++);
                        inFlight[u] = true;
                        long t0 = System.nanoTime();
                        store.append(chunkOf(u), offsetOf(u), pass, Unpooled.wrappedBuffer(content(u, pass)))
                                .whenComplete((v, err) -> done.add(new Done(u, System.nanoTime() - t0, err)));
                    }
                    Done d = done.poll(60, TimeUnit.SECONDS);
                    assertTrue(d != null, "write timed out");
                    if (d.error() != null) {
                        throw new AssertionError("write failed", d.error());
                    }
                    inFlight[d.unit()] = false;
                    version[d.unit()] = pass;
                    lat[completed++] = d.latencyNanos();
                    if (completed % 64 == 0) {
                        // a read of units not in flight, checked against what was acknowledged
                        int u = pick.nextInt(units - 1);
                        if (!inFlight[u] && !inFlight[u + 1] && chunkOf(u).equals(chunkOf(u + 1))) {
                            int skip = pick.nextInt(UNIT);
                            byte[] want = new byte[UNIT];
                            System.arraycopy(content(u, version[u]), skip, want, 0, UNIT - skip);
                            System.arraycopy(content(u + 1, version[u + 1]), 0, want, UNIT - skip, skip);
                            assertArrayEquals(want, read(store, chunkOf(u), offsetOf(u) + skip, UNIT), "unit " + u);
                            checkedReads++;
                        }
                    }
                    peakDisk = Math.max(peakDisk, store.diskBytes());
                }
                latencies.add(lat);
                System.out.printf("pass %d: disk %d MiB, live %d MiB, utilisation %.3f, cleaner moved %d MiB, freed %d segments%n",
                        pass, store.diskBytes() >> 20, store.liveBytes().total() >> 20, store.utilisation(),
                        (long) store.logMetrics().cleanerBytesMoved.count() >> 20,
                        (long) store.logMetrics().cleanerSegmentsFreed.count());
            }
            // let the cleaner finish the backlog the last pass left
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (store.diskBytes() > 1.3 * area && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            long writeSeconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started);
            System.out.printf("area %d MiB x %d passes in %d s; peak disk %d MiB; final disk %d MiB = %.3fx live; "
                            + "cleaner moved %d MiB, freed %d segments; %d reads checked during the run; writes/fsync %.1f%n",
                    area >> 20, PASSES, writeSeconds, peakDisk >> 20, store.diskBytes() >> 20,
                    (double) store.diskBytes() / area, (long) store.logMetrics().cleanerBytesMoved.count() >> 20,
                    (long) store.logMetrics().cleanerSegmentsFreed.count(), checkedReads, metrics.writesPerFsync());
            System.out.printf("foreground write latency (64 KiB, %d in flight): without cleaner p50 %.2f ms p99 %.2f ms; "
                            + "with cleaner p50 %.2f ms p99 %.2f ms%n", DEPTH,
                    pct(latencies.subList(1, 2), 0.50), pct(latencies.subList(1, 2), 0.99),
                    pct(latencies.subList(2, PASSES), 0.50), pct(latencies.subList(2, PASSES), 0.99));

            assertEquals(area, store.liveBytes().total());
            assertTrue(store.diskBytes() <= 1.3 * area, "disk " + store.diskBytes() + " > 1.3 x " + area);
            assertTrue(store.logMetrics().cleanerSegmentsFreed.count() > 0);
            assertTrue(checkedReads > 0);
            for (int u = 0; u < units; u++) {
                assertArrayEquals(content(u, PASSES), read(store, chunkOf(u), offsetOf(u), UNIT), "unit " + u);
            }
        }
    }

    private static double pct(List<long[]> passes, double q) {
        long[] all = passes.stream().flatMapToLong(Arrays::stream).sorted().toArray();
        return all[(int) Math.min(all.length - 1, Math.floor(q * all.length))] / 1e6;
    }
}
