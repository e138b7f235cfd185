package io.fastblock.bench.chain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class FioRunTest {
    private static final String REPORT = """
            fio: some warning before the report
            {"fio version": "fio-3.33", "jobs": [{"jobname": "raw", "error": 0,
              "read": {"io_bytes": 0, "total_ios": 0, "runtime": 0, "clat_ns": {}},
              "write": {"io_bytes": 409600, "total_ios": 100, "runtime": 2000,
                        "clat_ns": {"percentile": {"50.000000": 250000, "99.000000": 1500000}}}}]}
            """;

    @Test
    void readsTheWriteSideOfFiosJsonAfterWarnings() throws IOException {
        RunResult r = FioRun.parse(REPORT, true);
        assertEquals(100, r.ios());
        assertEquals(409600, r.bytes());
        assertEquals(2.0, r.seconds());
        assertEquals(50.0, r.iops());
        assertEquals(250, r.p50Micros());
        assertEquals(1500, r.p99Micros());
    }

    @Test
    void noJsonIsAPreciseError() {
        IOException e = assertThrows(IOException.class, () -> FioRun.parse("fio: unrecognized option", false));
        assertTrue(e.getMessage().contains("no JSON report"), e.getMessage());
    }

    @Test
    void settingsRejectNonsense() {
        assertThrows(IllegalArgumentException.class, () -> ChainBenchmark.Settings.fromArgs("--span=20M"));
        assertThrows(IllegalArgumentException.class, () -> ChainBenchmark.Settings.fromArgs("--rounds=0"));
        assertThrows(IllegalArgumentException.class, () -> ChainBenchmark.Settings.fromArgs("--tail-layout=nope"));
        assertThrows(IllegalArgumentException.class, () -> ChainBenchmark.Settings.fromArgs("--bogus=1"));
        assertThrows(IllegalArgumentException.class, () -> ChainBenchmark.Settings.fromArgs("--workloads=4k-randwrite,nope"));
        assertEquals(List.of("4k-randread"), ChainBenchmark.Settings.fromArgs("--workloads=4k-randread").workloads().stream()
                .map(StorageWorkload::name).toList());
        ChainBenchmark.Settings s = ChainBenchmark.Settings.fromArgs("--dir=/tmp/x", "--tail-layout=both", "--rounds=5");
        assertEquals(Path.of("/tmp/x"), s.dir());
        assertEquals(5, s.rounds());
        assertEquals(2, s.layouts().size());
    }

    @Test
    void medianOfEvenAndOddCounts() {
        assertEquals(2.0, ChainBenchmark.median(List.of(3.0, 1.0, 2.0)));
        assertEquals(2.5, ChainBenchmark.median(List.of(4.0, 1.0, 2.0, 3.0)));
    }
}
