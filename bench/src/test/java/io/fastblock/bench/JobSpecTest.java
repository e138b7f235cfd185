package io.fastblock.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.bench.initiator.IscsiUrl;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class JobSpecTest {
    static final String URL = "iscsi://127.0.0.1:3260/iqn.2026-11.io.fastblock:demo/0";

    @Test
    void defaults() {
        JobSpec s = JobSpec.parse("--url", URL);
        assertEquals(Workload.RANDREAD, s.workload());
        assertEquals(4096, s.blockSize());
        assertEquals(32, s.iodepth());
        assertEquals(10_000_000_000L, s.runtimeNanos());
        assertEquals(70_000_000_000L, s.timeLimitNanos());
        assertFalse(s.verify());
        assertNull(s.json());
    }

    @Test
    void everyOptionBothSpellings() {
        JobSpec s = JobSpec.parse("--url=" + URL, "--url", "iscsi://u%x@y@10.0.0.1/iqn.x:y/3", "--rw", "randrw",
                "--rwmixread=70", "--bs", "1M", "--iodepth", "8", "--runtime=30s", "--ramp", "2s", "--offset", "1G",
                "--span", "512M", "--seed", "99", "--verify", "--json", "/tmp/x.json", "--initiator-name", "iqn.me:a",
                "--time-limit", "2m");
        assertEquals(2, s.urls().size());
        IscsiUrl second = s.urls().get(1);
        assertEquals("10.0.0.1", second.host());
        assertEquals(3260, second.port());
        assertEquals("iqn.x:y", second.target());
        assertEquals(3, second.lun());
        assertEquals("u", second.user());
        assertEquals("x@y", second.secret());
        assertEquals(Workload.RANDRW, s.workload());
        assertEquals(70, s.rwmixread());
        assertEquals(1 << 20, s.blockSize());
        assertEquals(8, s.iodepth());
        assertEquals(30_000_000_000L, s.runtimeNanos());
        assertEquals(2_000_000_000L, s.rampNanos());
        assertEquals(1L << 30, s.offset());
        assertEquals(512L << 20, s.span());
        assertEquals(99, s.seed());
        assertTrue(s.verify());
        assertEquals(Path.of("/tmp/x.json"), s.json());
        assertEquals("iqn.me:a", s.initiatorName());
        assertEquals(120_000_000_000L, s.timeLimitNanos());
    }

    @Test
    void sizeWithoutRuntimeRunsUntilTheSizeIsDoneBoundedByTenMinutes() {
        JobSpec s = JobSpec.parse("--url", URL, "--size", "1G", "--rw", "write");
        assertEquals(0, s.runtimeNanos());
        assertEquals(1L << 30, s.size());
        assertEquals(600_000_000_000L, s.timeLimitNanos());
    }

    @Test
    void unitsParse() {
        assertEquals(512, Units.parseSize("--bs", "512"));
        assertEquals(4096, Units.parseSize("--bs", "4k"));
        assertEquals(4096, Units.parseSize("--bs", "4KiB"));
        assertEquals(3L << 40, Units.parseSize("--size", "3T"));
        assertEquals(500_000_000L, Units.parseDurationNanos("--runtime", "500ms"));
        assertEquals(120_000_000_000L, Units.parseDurationNanos("--runtime", "2m"));
        assertEquals(7_000_000_000L, Units.parseDurationNanos("--runtime", "7"));
        assertEquals("4k", Units.formatSize(4096));
        assertEquals("1M", Units.formatSize(1 << 20));
        assertEquals("1536", Units.formatSize(1536));
    }

    private static String error(String... args) {
        return assertThrows(IllegalArgumentException.class, () -> JobSpec.parse(args)).getMessage();
    }

    @Test
    void badInputGetsAPreciseMessage() {
        assertEquals("give at least one --url", error("--rw", "read"));
        assertEquals("--rw: 'randomread' is not one of randread, randwrite, read, write, randrw",
                error("--url", URL, "--rw", "randomread"));
        assertEquals("--bs: '4q' is not a size (like 4096, 4k, 1M, 2G)", error("--url", URL, "--bs", "4q"));
        assertEquals("--bs must be a multiple of 512 between 512 and 16M, got 1000",
                error("--url", URL, "--bs", "1000"));
        assertEquals("--iodepth must be 1..1024, got 0", error("--url", URL, "--iodepth", "0"));
        assertEquals("--iodepth: 'x' is not an integer", error("--url", URL, "--iodepth", "x"));
        assertEquals("--rwmixread must be 0..100, got 101", error("--url", URL, "--rwmixread", "101"));
        assertEquals("--runtime: '3 days' is not a duration (like 30s, 500ms, 2m)",
                error("--url", URL, "--runtime", "3 days"));
        assertEquals("--runtime: '25h' is longer than a day", error("--url", URL, "--runtime", "25h"));
        assertEquals("--runtime must be positive", error("--url", URL, "--runtime", "0"));
        assertEquals("--offset must be a multiple of 512, got 100", error("--url", URL, "--offset", "100"));
        assertEquals("--span 1024 is smaller than --bs 4096", error("--url", URL, "--span", "1k"));
        assertEquals("unknown option --depth", error("--url", URL, "--depth", "3"));
        assertEquals("--bs needs a value", error("--url", URL, "--bs"));
        assertEquals("unexpected argument 'randread'", error("--url", URL, "randread"));
        assertEquals("--verify takes no value or true/false, got 'maybe'", error("--url", URL, "--verify=maybe"));
        assertEquals("not an iscsi:// URL: http://x/y/0", error("--url", "http://x/y/0"));
        assertEquals("expected iscsi://host[:port]/<target-iqn>/<lun>, got iscsi://h/iqn.x",
                error("--url", "iscsi://h/iqn.x"));
        assertEquals("LUN must be a number, got 'a' in iscsi://h/iqn.x/a", error("--url", "iscsi://h/iqn.x/a"));
        assertEquals("bad host:port 'h:x' in iscsi://h:x/iqn.x/0", error("--url", "iscsi://h:x/iqn.x/0"));
        assertEquals("CHAP credentials must be user%secret in iscsi://u@h/iqn.x/0", error("--url", "iscsi://u@h/iqn.x/0"));
    }

    @Test
    void urlToStringHidesTheSecret() {
        IscsiUrl u = IscsiUrl.parse("iscsi://alice%s3cret@127.0.0.1:3261/iqn.x:y/1");
        assertEquals("iscsi://alice@127.0.0.1:3261/iqn.x:y/1", u.toString());
        assertEquals(3261, u.port());
    }
}
