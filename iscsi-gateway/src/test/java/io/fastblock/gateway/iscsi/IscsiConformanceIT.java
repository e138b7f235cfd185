package io.fastblock.gateway.iscsi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.gateway.GatewayConfig;
import io.fastblock.gateway.iscsi.conformance.CunitOutput;
import io.fastblock.gateway.iscsi.conformance.CunitOutput.Outcome;
import io.fastblock.gateway.iscsi.conformance.CunitOutput.Result;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Debian's libiscsi conformance suite ({@code iscsi-test-cu -d -t ALL}) against an
 * {@link IscsiServer} with a thin-provisioned file LU, with a second session to the same LU for
 * the multipath tests. Nothing may fail; the passed count may only go up.
 */
class IscsiConformanceIT {
    static final String IQN = "iqn.2026-11.io.fastblock:conformance";
    /** What the gateway reached when this test was written; raise it when more tests pass. */
    static final int PASSED_AT_LEAST = 202;
    static final int TIME_LIMIT_SECONDS = 240;

    @TempDir
    Path dir;

    @Test
    void iscsiTestCuPassesWithNoFailures() throws Exception {
        FileTargetCatalog catalog = new FileTargetCatalog(Map.of(IQN, dir.resolve("lun0.img")), 64L << 20);
        catalog.thin = true;
        try (IscsiServer server = new IscsiServer(GatewayConfig.fromArgs("--port=0"), catalog).start()) {
            String url = "iscsi://127.0.0.1:" + server.port() + "/" + IQN + "/0";
            Path log = dir.resolve("iscsi-test-cu.log");
            Process p = new ProcessBuilder("iscsi-test-cu", "-d", "-v", "-t", "ALL", url, url)
                    .redirectErrorStream(true).redirectOutput(log.toFile()).start();
            p.getOutputStream().close();
            if (!p.waitFor(TIME_LIMIT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor();
                throw new AssertionError("iscsi-test-cu ran past " + TIME_LIMIT_SECONDS + " s (a hung target?)");
            }
            String out = Files.readString(log, StandardCharsets.UTF_8);
            // kept for reading what was skipped and why (the temp dir goes with the test)
            Files.copy(log, Path.of("target", "iscsi-test-cu.log"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            List<Result> results = CunitOutput.parse(out);
            long passed = CunitOutput.count(results, Outcome.PASSED);
            long failed = CunitOutput.count(results, Outcome.FAILED);
            String summary = CunitOutput.summary(results);
            System.out.println(summary);
            assertTrue(results.size() > 200, "the suite ran (" + results.size() + " results)\n" + tail(out));
            assertEquals(0, failed, summary + "\n" + CunitOutput.failures(results));
            assertTrue(passed >= PASSED_AT_LEAST, summary);
        }
    }

    private static String tail(String s) {
        return s.length() > 3000 ? s.substring(s.length() - 3000) : s;
    }
}
