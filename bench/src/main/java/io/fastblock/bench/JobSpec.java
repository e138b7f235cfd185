package io.fastblock.bench;

import io.fastblock.bench.initiator.IscsiInitiator;
import io.fastblock.bench.initiator.IscsiUrl;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * One fio-like job, run against every URL at once (one session per URL).
 *
 * @param urls          the LUNs, each driven by its own session and queue
 * @param workload      access pattern
 * @param rwmixread     percentage of reads for {@link Workload#RANDRW}
 * @param blockSize     bytes per I/O
 * @param iodepth       commands outstanding per URL
 * @param runtimeNanos  how long to run after the ramp (0: until {@code size} is done)
 * @param size          bytes to transfer per URL, ramp included (0: until {@code runtime} is over)
 * @param rampNanos     time at the start whose I/O is not counted
 * @param offset        start of the region used, in bytes
 * @param span          length of the region (0: to the end of the LUN)
 * @param seed          seed of the offset and mix choices, and of the verify pattern
 * @param verify        write a checkable pattern and check what is read
 * @param json          where to write the JSON report, or null
 * @param initiatorName our IQN
 * @param timeLimitNanos hard bound on the whole job including verification; outstanding I/O is abandoned after it
 */
public record JobSpec(List<IscsiUrl> urls, Workload workload, int rwmixread, int blockSize, int iodepth,
                      long runtimeNanos, long size, long rampNanos, long offset, long span, long seed,
                      boolean verify, Path json, String initiatorName, long timeLimitNanos) {

    static final long DEFAULT_RUNTIME_NANOS = 10_000_000_000L;

    public static final String USAGE = """
            usage: LoadGenerator --url iscsi://[user%secret@]host[:port]/<iqn>/<lun> [--url ...]
                     [--rw randread|randwrite|read|write|randrw] [--rwmixread 70] [--bs 4k] [--iodepth 32]
                     [--runtime 30s | --size 1G] [--ramp 2s] [--offset 0] [--span 1G] [--seed 1]
                     [--verify] [--json FILE] [--initiator-name IQN] [--time-limit 10m]
              Runs the job on every URL at once (one session and queue each) and prints IOPS, MB/s
              (10^6 bytes) and latency percentiles per URL and in total. Without --runtime and
              --size it runs 10s. --time-limit bounds everything (default: runtime + ramp + 60s,
              or 10m with --size).""";

    public JobSpec {
        urls = List.copyOf(urls);
        if (urls.isEmpty()) {
            throw new IllegalArgumentException("give at least one --url");
        }
        if (rwmixread < 0 || rwmixread > 100) {
            throw new IllegalArgumentException("--rwmixread must be 0..100, got " + rwmixread);
        }
        if (blockSize < 512 || blockSize % 512 != 0 || blockSize > (16 << 20)) {
            throw new IllegalArgumentException("--bs must be a multiple of 512 between 512 and 16M, got " + blockSize);
        }
        if (iodepth < 1 || iodepth > 1024) {
            throw new IllegalArgumentException("--iodepth must be 1..1024, got " + iodepth);
        }
        if (runtimeNanos < 0 || size < 0 || rampNanos < 0 || offset < 0 || span < 0) {
            throw new IllegalArgumentException("durations and sizes must not be negative");
        }
        if (offset % 512 != 0) {
            throw new IllegalArgumentException("--offset must be a multiple of 512, got " + offset);
        }
        if (span != 0 && span < blockSize) {
            throw new IllegalArgumentException("--span " + span + " is smaller than --bs " + blockSize);
        }
        if (timeLimitNanos <= 0) {
            throw new IllegalArgumentException("--time-limit must be positive");
        }
    }

    /** Parses command-line options; {@code --name value} and {@code --name=value} are both accepted. */
    public static JobSpec parse(String... args) {
        List<IscsiUrl> urls = new ArrayList<>();
        Workload rw = Workload.RANDREAD;
        int mix = 50;
        long bs = 4096;
        int iodepth = 32;
        long runtime = -1;
        long size = 0;
        long ramp = 0;
        long offset = 0;
        long span = 0;
        long seed = 1;
        boolean verify = false;
        Path json = null;
        String initiator = IscsiInitiator.DEFAULT_NAME;
        long timeLimit = -1;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument '" + a + "'");
            }
            String name = a.substring(2);
            String value = null;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            }
            if (name.equals("verify")) {
                verify = switch (value == null ? "true" : value) {
                    case "true", "1" -> true;
                    case "false", "0" -> false;
                    default -> throw new IllegalArgumentException("--verify takes no value or true/false, got '"
                            + value + "'");
                };
                continue;
            }
            if (value == null) {
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException("--" + name + " needs a value");
                }
                value = args[++i];
            }
            String opt = "--" + name;
            switch (name) {
                case "url" -> urls.add(IscsiUrl.parse(value));
                case "rw" -> rw = Workload.parse(value);
                case "rwmixread" -> mix = intValue(opt, value);
                case "bs" -> bs = Units.parseSize(opt, value);
                case "iodepth" -> iodepth = intValue(opt, value);
                case "runtime" -> runtime = Units.parseDurationNanos(opt, value);
                case "size" -> size = Units.parseSize(opt, value);
                case "ramp" -> ramp = Units.parseDurationNanos(opt, value);
                case "offset" -> offset = Units.parseSize(opt, value);
                case "span" -> span = Units.parseSize(opt, value);
                case "seed" -> seed = longValue(opt, value);
                case "json" -> json = Path.of(value);
                case "initiator-name" -> initiator = value;
                case "time-limit" -> timeLimit = Units.parseDurationNanos(opt, value);
                default -> throw new IllegalArgumentException("unknown option " + opt);
            }
        }
        if (runtime == 0) {
            throw new IllegalArgumentException("--runtime must be positive");
        }
        if (runtime < 0) {
            runtime = size > 0 ? 0 : DEFAULT_RUNTIME_NANOS;
        }
        if (timeLimit < 0) {
            timeLimit = runtime > 0 ? runtime + ramp + 60_000_000_000L : 600_000_000_000L;
        }
        if (bs > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("--bs " + bs + " is too large");
        }
        return new JobSpec(urls, rw, mix, (int) bs, iodepth, runtime, size, ramp, offset, span, seed, verify, json,
                initiator, timeLimit);
    }

    private static int intValue(String opt, String v) {
        try {
            return Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(opt + ": '" + v + "' is not an integer");
        }
    }

    private static long longValue(String opt, String v) {
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(opt + ": '" + v + "' is not an integer");
        }
    }
}
