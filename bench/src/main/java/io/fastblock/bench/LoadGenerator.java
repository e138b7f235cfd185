package io.fastblock.bench;

import io.fastblock.bench.initiator.IscsiInitiator;
import io.fastblock.bench.initiator.IscsiSession;
import io.fastblock.bench.initiator.IscsiUrl;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * fio-like load generator speaking iSCSI itself: logs in to every URL, runs the job on all of them
 * at once and reports IOPS, MB/s and latency percentiles. Exit status 0 when every command
 * succeeded and nothing failed verification, 1 otherwise, 2 for a usage error.
 */
public final class LoadGenerator {
    static final long LOGIN_TIMEOUT_MILLIS = 10_000;
    static final long LOGOUT_TIMEOUT_MILLIS = 5_000;

    private LoadGenerator() {
    }

    public static void main(String[] args) throws Exception {
        JobSpec spec;
        try {
            if (args.length == 0 || List.of(args).contains("--help") || List.of(args).contains("-h")) {
                System.out.println(JobSpec.USAGE);
                System.exit(args.length == 0 ? 2 : 0);
                return;
            }
            spec = JobSpec.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("error: " + e.getMessage());
            System.err.println(JobSpec.USAGE);
            System.exit(2);
            return;
        }
        Report report;
        try {
            report = run(spec);
        } catch (IllegalArgumentException | ExecutionException e) {
            Throwable c = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            System.err.println("error: " + c.getMessage());
            System.exit(1);
            return;
        }
        System.out.print(report.table());
        System.exit(report.errors() == 0 && report.mismatches() == 0 ? 0 : 1);
    }

    /** Runs {@code spec} to the end (bounded by its time limit), writes its JSON file if asked, returns the measurements. */
    public static Report run(JobSpec spec) throws InterruptedException, ExecutionException {
        int threads = Math.max(1, Math.min(spec.urls().size(), Runtime.getRuntime().availableProcessors()));
        long hardStop = System.nanoTime() + spec.timeLimitNanos();
        try (IscsiInitiator initiator = new IscsiInitiator(threads, spec.initiatorName())) {
            List<IscsiSession> sessions = new ArrayList<>();
            try {
                for (IscsiUrl url : spec.urls()) {
                    sessions.add(await(initiator.login(url, LOGIN_TIMEOUT_MILLIS), LOGIN_TIMEOUT_MILLIS + 1000));
                }
                List<VolumeWorker> workers = new ArrayList<>();
                for (int i = 0; i < sessions.size(); i++) {
                    IscsiSession.Capacity cap = await(sessions.get(i).readCapacity(), LOGIN_TIMEOUT_MILLIS);
                    workers.add(new VolumeWorker(spec, sessions.get(i), cap, i));
                }
                long start = System.nanoTime();
                List<CompletableFuture<VolumeResult>> running = new ArrayList<>();
                for (VolumeWorker w : workers) {
                    running.add(w.start(start));
                }
                CompletableFuture<Void> all = CompletableFuture.allOf(running.toArray(CompletableFuture[]::new));
                try {
                    all.get(Math.max(1, hardStop - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (TimeoutException e) {
                    // Something hangs (a target that stopped answering): stop issuing, then drop the
                    // connections so the outstanding commands fail and every worker reports.
                    workers.forEach(VolumeWorker::stop);
                    sessions.forEach(IscsiSession::close);
                    try {
                        all.get(LOGOUT_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
                    } catch (TimeoutException again) {
                        throw new ExecutionException(new IllegalStateException(
                                "the job did not finish within its time limit even after closing the sessions"));
                    }
                }
                List<VolumeResult> results = new ArrayList<>();
                for (CompletableFuture<VolumeResult> f : running) {
                    results.add(f.get());
                }
                Report report = new Report(spec, results);
                if (spec.json() != null) {
                    try {
                        report.writeJson(spec.json());
                    } catch (java.io.IOException e) {
                        throw new ExecutionException(new java.io.IOException("cannot write " + spec.json() + ": "
                                + e.getMessage(), e));
                    }
                }
                return report;
            } finally {
                List<CompletableFuture<Void>> outs = new ArrayList<>();
                for (IscsiSession s : sessions) {
                    outs.add(s.logout(LOGOUT_TIMEOUT_MILLIS));
                }
                try {
                    CompletableFuture.allOf(outs.toArray(CompletableFuture[]::new))
                            .get(LOGOUT_TIMEOUT_MILLIS + 1000, TimeUnit.MILLISECONDS);
                } catch (TimeoutException | ExecutionException ignored) {
                    sessions.forEach(IscsiSession::close);
                }
            }
        }
    }

    private static <T> T await(CompletableFuture<T> f, long millis) throws InterruptedException, ExecutionException {
        try {
            return f.get(millis, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new ExecutionException(new TimeoutException("no answer within " + millis + " ms"));
        }
    }
}
