package io.fastblock.bench.log;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CleanerBenchmarkTest {
    @TempDir
    Path dir;

    @Test
    void aSmallRunCleansMovesBytesAndLeavesNothingBehind() throws Exception {
        CleanerBenchmark.Result r = CleanerBenchmark.run(CleanerBenchmark.Settings.fromArgs(
                "--dir=" + dir, "--prefill=16M", "--overwrites=3000", "--passes=4", "--segment-size=2M"));
        assertTrue(r.segmentsFreed() > 0, "freed " + r.segmentsFreed());
        assertTrue(r.movedBytes() > 0, "moved " + r.movedBytes());
        assertTrue(r.cleanerCpuNanos() > 0 && r.cpuMillisPerMovedMiB() > 0);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        CleanerBenchmark.print(r, new PrintStream(out, true));
        assertTrue(out.toString().contains("per moved MiB"), out.toString());
        try (Stream<Path> left = Files.list(dir)) {
            assertEquals(0, left.count(), "the run's log directory is removed");
        }
    }

    @Test
    void badSettingsNameTheOption() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CleanerBenchmark.Settings.fromArgs("--prefill=3k"));
        assertTrue(e.getMessage().contains("--prefill"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> CleanerBenchmark.Settings.fromArgs("--passes=0"));
        assertTrue(e.getMessage().contains("--passes"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> CleanerBenchmark.Settings.fromArgs("--bogus=1"));
        assertTrue(e.getMessage().contains("bogus"), e.getMessage());
    }
}
