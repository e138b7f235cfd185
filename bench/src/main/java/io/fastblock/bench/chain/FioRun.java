package io.fastblock.bench.chain;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * fio on a raw file: the same workload with libaio, O_DIRECT and the same queue depth, so the
 * figure is what the disk itself gives at that depth (no page cache, no replication, no fsync).
 */
public final class FioRun {
    private final String fio;
    private final Path file;
    private final long size;

    public FioRun(String fio, Path file, long size) {
        this.fio = fio;
        this.file = file;
        this.size = size;
    }

    /** Lays the file out (fio writes it whole before its first job), so reads read allocated blocks. */
    public void fill() throws IOException, InterruptedException {
        run(new StorageWorkload("fill", true, false, 1 << 20, 32), 0, 0);
    }

    public RunResult run(StorageWorkload w, long rampNanos, long measureNanos) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(fio, "--name=raw", "--filename=" + file, "--size=" + size,
                "--rw=" + w.fioRw(), "--bs=" + w.blockSize(), "--iodepth=" + w.queueDepth(), "--ioengine=libaio",
                "--direct=1", "--randrepeat=0", "--output-format=json"));
        if (measureNanos > 0) {
            cmd.add("--time_based");
            cmd.add("--runtime=" + Math.max(1, TimeUnit.NANOSECONDS.toMillis(measureNanos)) + "ms");
            if (rampNanos > 0) {
                cmd.add("--ramp_time=" + Math.max(1, TimeUnit.NANOSECONDS.toMillis(rampNanos)) + "ms");
            }
        }
        Process p = new ProcessBuilder(cmd).redirectErrorStream(false).start();
        byte[] out = p.getInputStream().readAllBytes();
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        long limit = TimeUnit.NANOSECONDS.toSeconds(rampNanos + measureNanos) + 600;
        if (!p.waitFor(limit, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException("fio did not finish in " + limit + " s");
        }
        if (p.exitValue() != 0) {
            throw new IOException("fio exited with " + p.exitValue() + ": " + err.strip());
        }
        return parse(new String(out, StandardCharsets.UTF_8), w.write());
    }

    /** Reads fio's JSON report (fio may print warnings before the JSON). */
    static RunResult parse(String output, boolean write) throws IOException {
        int brace = output.indexOf('{');
        if (brace < 0) {
            throw new IOException("fio printed no JSON report: " + output.strip());
        }
        JsonNode job = new ObjectMapper().readTree(output.substring(brace)).path("jobs").path(0);
        JsonNode side = job.path(write ? "write" : "read");
        if (side.isMissingNode()) {
            throw new IOException("fio's report has no " + (write ? "write" : "read") + " figures");
        }
        long ios = side.path("total_ios").asLong();
        long bytes = side.path("io_bytes").asLong();
        double seconds = side.path("runtime").asLong() / 1000.0;
        JsonNode pct = side.path("clat_ns").path("percentile");
        return new RunResult(ios, bytes, seconds, pct.path("50.000000").asLong() / 1000, pct.path("99.000000").asLong() / 1000,
                job.path("error").asLong());
    }

    public void delete() throws IOException {
        Files.deleteIfExists(file);
    }
}
