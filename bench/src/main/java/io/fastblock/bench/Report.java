package io.fastblock.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The outcome of a job: per URL and in total, IOPS, MB/s (10^6 bytes per second) and latency
 * percentiles in microseconds, as a human table and as JSON.
 */
public record Report(JobSpec spec, List<VolumeResult> volumes) {
    static final double[] PERCENTILES = {50, 90, 99, 99.9};

    public long errors() {
        return volumes.stream().mapToLong(VolumeResult::errors).sum();
    }

    public long mismatches() {
        return volumes.stream().mapToLong(v -> v.verify() == null ? 0 : v.verify().mismatches()).sum();
    }

    /** All reads (or writes) merged; the window is the longest of the volumes' (they run at once). */
    public DirectionStats total(boolean reads) {
        DirectionStats t = new DirectionStats();
        for (VolumeResult v : volumes) {
            t.add(reads ? v.read() : v.write());
        }
        return t;
    }

    public long totalNanos() {
        return volumes.stream().mapToLong(VolumeResult::measuredNanos).max().orElse(0);
    }

    static double iops(DirectionStats s, long nanos) {
        return nanos <= 0 ? 0 : s.ios() * 1e9 / nanos;
    }

    static double mbps(DirectionStats s, long nanos) {
        return nanos <= 0 ? 0 : s.bytes() * 1e3 / nanos;
    }

    public String table() {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "job: rw=%s bs=%s iodepth=%d%s runtime=%s ramp=%s urls=%d%s%n",
                spec.workload().fioName(), Units.formatSize(spec.blockSize()), spec.iodepth(),
                spec.workload() == Workload.RANDRW ? " rwmixread=" + spec.rwmixread() : "",
                spec.runtimeNanos() > 0 ? spec.runtimeNanos() / 1_000_000 + "ms" : "size " + Units.formatSize(spec.size()),
                spec.rampNanos() / 1_000_000 + "ms", spec.urls().size(), spec.verify() ? " verify" : ""));
        for (int i = 0; i < volumes.size(); i++) {
            sb.append(String.format(Locale.ROOT, "  #%d %s%n", i, volumes.get(i).url()));
        }
        sb.append(String.format(Locale.ROOT, "%-6s %-5s %10s %10s %9s %9s %9s %9s %9s %9s%n", "lun", "dir", "ios",
                "IOPS", "MB/s", "p50 us", "p90 us", "p99 us", "p99.9 us", "max us"));
        for (int i = 0; i < volumes.size(); i++) {
            VolumeResult v = volumes.get(i);
            row(sb, "#" + i, v.read(), v.measuredNanos(), "read");
            row(sb, "#" + i, v.write(), v.measuredNanos(), "write");
        }
        if (volumes.size() > 1) {
            row(sb, "total", total(true), totalNanos(), "read");
            row(sb, "total", total(false), totalNanos(), "write");
        }
        for (VolumeResult v : volumes) {
            if (v.errors() > 0) {
                sb.append(v.url()).append(": ").append(v.errors()).append(" failed commands, e.g. ")
                        .append(v.errorSamples()).append('\n');
            }
            if (v.verify() != null) {
                VolumeResult.VerifyStats s = v.verify();
                sb.append(String.format(Locale.ROOT,
                        "%s: verify: %d exact, %d intact from another run, %d never written, %d MISMATCHED"
                                + " (%d read back after the writes)%s%n",
                        v.url(), s.exact(), s.otherGeneration(), s.zeros(), s.mismatches(), s.readBack(),
                        s.mismatchSamples().isEmpty() ? "" : " " + s.mismatchSamples()));
            }
        }
        return sb.toString();
    }

    private static void row(StringBuilder sb, String label, DirectionStats s, long nanos, String dir) {
        if (s.ios() == 0) {
            return;
        }
        LatencyHistogram h = s.latency();
        sb.append(String.format(Locale.ROOT, "%-6s %-5s %10d %10.0f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f%n", label, dir, s.ios(), iops(s, nanos),
                mbps(s, nanos), h.percentile(50) / 1e3, h.percentile(90) / 1e3, h.percentile(99) / 1e3,
                h.percentile(99.9) / 1e3, h.max() / 1e3));
    }

    static Map<String, Object> direction(DirectionStats s, long nanos) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ios", s.ios());
        m.put("bytes", s.bytes());
        m.put("iops", round(iops(s, nanos)));
        m.put("mb_per_s", round(mbps(s, nanos)));
        Map<String, Object> lat = new LinkedHashMap<>();
        LatencyHistogram h = s.latency();
        for (double p : PERCENTILES) {
            lat.put("p" + (p == Math.rint(p) ? Long.toString((long) p) : Double.toString(p)), round(h.percentile(p) / 1e3));
        }
        lat.put("min", round(h.min() / 1e3));
        lat.put("mean", round(h.mean() / 1e3));
        lat.put("max", round(h.max() / 1e3));
        m.put("latency_us", lat);
        return m;
    }

    private static double round(double v) {
        return Math.round(v * 10) / 10.0;
    }

    public Map<String, Object> toJson() {
        Map<String, Object> root = new LinkedHashMap<>();
        Map<String, Object> job = new LinkedHashMap<>();
        job.put("rw", spec.workload().fioName());
        job.put("rwmixread", spec.rwmixread());
        job.put("bs", spec.blockSize());
        job.put("iodepth", spec.iodepth());
        job.put("runtime_ms", spec.runtimeNanos() / 1_000_000);
        job.put("size", spec.size());
        job.put("ramp_ms", spec.rampNanos() / 1_000_000);
        job.put("offset", spec.offset());
        job.put("span", spec.span());
        job.put("seed", spec.seed());
        job.put("verify", spec.verify());
        root.put("job", job);
        List<Object> vols = new ArrayList<>();
        for (VolumeResult v : volumes) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("url", v.url());
            m.put("measured_ms", round(v.measuredNanos() / 1e6));
            m.put("read", direction(v.read(), v.measuredNanos()));
            m.put("write", direction(v.write(), v.measuredNanos()));
            m.put("errors", v.errors());
            m.put("error_samples", v.errorSamples());
            m.put("window_stalls", v.windowStalls());
            m.put("r2ts", v.r2ts());
            if (v.verify() != null) {
                Map<String, Object> vm = new LinkedHashMap<>();
                vm.put("exact", v.verify().exact());
                vm.put("other_generation", v.verify().otherGeneration());
                vm.put("zeros", v.verify().zeros());
                vm.put("mismatches", v.verify().mismatches());
                vm.put("read_back", v.verify().readBack());
                vm.put("mismatch_samples", v.verify().mismatchSamples());
                m.put("verify", vm);
            }
            vols.add(m);
        }
        root.put("volumes", vols);
        Map<String, Object> total = new LinkedHashMap<>();
        total.put("read", direction(total(true), totalNanos()));
        total.put("write", direction(total(false), totalNanos()));
        total.put("errors", errors());
        total.put("mismatches", mismatches());
        root.put("total", total);
        return root;
    }

    public String json() {
        try {
            return new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(toJson());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    public void writeJson(Path file) throws IOException {
        Files.writeString(file, json() + "\n");
    }
}
