package io.fastblock.bench.chain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.storage.chain.TailLayout;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A bounded smoke run of the storage benchmark: a real 3-node chain and real fio, one short round
 * per workload. Checks that every workload ran on both sides without errors and that the tail's
 * group commit was measured; it asserts no speed.
 */
class ChainBenchmarkIT {
    @TempDir
    Path dir;

    @Test
    void everyWorkloadRunsOnTheChainAndOnRawFio() throws Exception {
        ChainBenchmark.Settings s = new ChainBenchmark.Settings(dir.resolve("bench"), 32L << 20, 0,
                TimeUnit.MILLISECONDS.toNanos(700), 1, List.of(TailLayout.LOG_AND_IN_PLACE), "fio", null, false);
        ByteArrayOutputStream progress = new ByteArrayOutputStream();
        List<ChainBenchmark.Comparison> results = ChainBenchmark.run(s, new PrintStream(progress, true, StandardCharsets.UTF_8));
        assertEquals(StorageWorkload.STANDARD.size(), results.size(), progress.toString(StandardCharsets.UTF_8));
        for (ChainBenchmark.Comparison c : results) {
            String what = c.workload().name() + ": " + c;
            assertEquals(1, c.chain().size(), what);
            assertEquals(1, c.raw().size(), what);
            assertEquals(0, c.chainErrors(), what);
            assertTrue(c.chain().get(0).ios() > 0, what);
            assertEquals((long) c.chain().get(0).ios() * c.workload().blockSize(), c.chain().get(0).bytes(), what);
            assertTrue(c.raw().get(0).ios() > 0, what);
            if (c.workload().write()) {
                // Every acknowledged write went through the tail's log: at least one append per fsync.
                assertTrue(c.writesPerFsync() >= 1, what);
            }
        }
        String table = ChainBenchmark.table(results);
        for (StorageWorkload w : StorageWorkload.STANDARD) {
            assertTrue(table.contains("| " + w.name() + " |"), table);
        }
        // Without --keep the chain's and fio's files are gone.
        try (var left = Files.walk(dir.resolve("bench"))) {
            assertFalse(left.anyMatch(Files::isRegularFile), "files left behind");
        }
    }
}
