package io.fastblock.bench;

import io.fastblock.bench.initiator.IscsiSession;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.IOException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;

/**
 * Runs one job on one session: keeps {@code iodepth} commands in flight, each slot issuing its
 * next command from the completion of the previous one, on the session's event loop (so nothing
 * here is shared between threads). With --verify, no two commands touch the same block at once,
 * every write carries the pattern of a new generation, and reads are checked against the last
 * acknowledged generation; after a writing job every block it wrote is read back and checked.
 */
final class VolumeWorker {
    private static final int MAX_SAMPLES = 5;
    private static final long STOP_AFTER_ERRORS = 100;

    private final JobSpec spec;
    private final IscsiSession session;
    private final int blockSize;
    private final int lbaPerIo;
    private final long regionStart;
    private final long units;
    private final SplittableRandom random;
    private final DirectionStats read = new DirectionStats();
    private final DirectionStats write = new DirectionStats();
    private final List<String> errorSamples = new ArrayList<>();
    private final CompletableFuture<VolumeResult> done = new CompletableFuture<>();
    // --verify state: generation last acknowledged per unit (0 never written here, -1 unknown), units in flight
    private final int[] committed;
    private final BitSet busy;
    private final long verifySeed;
    private int generation;
    private long exact;
    private long otherGeneration;
    private long zeros;
    private long mismatches;
    private long readBack;
    private final List<String> mismatchSamples = new ArrayList<>();

    private long rampEnd;
    private long deadline;
    private long hardDeadline;
    private long lastCompletion;
    private long issuedBytes;
    private long seqCursor;
    private long errors;
    private int active;
    private boolean stopping;
    private final ByteBuf[] buffers;

    VolumeWorker(JobSpec spec, IscsiSession session, IscsiSession.Capacity capacity, int index) {
        this.spec = spec;
        this.session = session;
        this.blockSize = capacity.blockSize();
        if (spec.blockSize() % blockSize != 0) {
            throw new IllegalArgumentException("--bs " + spec.blockSize() + " is not a multiple of the block size "
                    + blockSize + " of " + session.url());
        }
        if (spec.offset() % blockSize != 0) {
            throw new IllegalArgumentException("--offset " + spec.offset() + " is not a multiple of the block size "
                    + blockSize + " of " + session.url());
        }
        this.lbaPerIo = spec.blockSize() / blockSize;
        this.regionStart = spec.offset();
        long end = spec.span() == 0 ? capacity.bytes() : Math.min(capacity.bytes(), spec.offset() + spec.span());
        this.units = (end - regionStart) / spec.blockSize();
        if (units < 1) {
            throw new IllegalArgumentException("the region from --offset " + spec.offset() + " holds no block of --bs "
                    + spec.blockSize() + " on " + session.url() + " (" + capacity.bytes() + " bytes)");
        }
        this.random = new SplittableRandom(spec.seed() * 1_000_003L + index);
        this.verifySeed = spec.seed();
        if (spec.verify()) {
            if (units > Integer.MAX_VALUE / 2) {
                throw new IllegalArgumentException("--verify keeps 4 bytes per block: the region has too many ("
                        + units + "); use --span");
            }
            if (units < spec.iodepth()) {
                throw new IllegalArgumentException("--verify needs a region of at least --iodepth blocks ("
                        + spec.iodepth() + "), it has " + units);
            }
            committed = new int[(int) units];
            busy = new BitSet((int) units);
        } else {
            committed = null;
            busy = null;
        }
        buffers = new ByteBuf[spec.iodepth()];
        for (int i = 0; i < buffers.length; i++) {
            ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(spec.blockSize(), spec.blockSize());
            b.writerIndex(spec.blockSize());
            if (!spec.verify()) {
                for (int j = 0; j < spec.blockSize(); j += 8) {
                    b.setLong(j, random.nextLong()); // incompressible, fixed for the run: no per-I/O work
                }
            }
            buffers[i] = b;
        }
    }

    /** Starts on the session's event loop at {@code startNanos}; completes after the run (and the read-back). */
    CompletableFuture<VolumeResult> start(long startNanos) {
        session.eventLoop().execute(() -> {
            rampEnd = startNanos + spec.rampNanos();
            deadline = spec.runtimeNanos() > 0 ? rampEnd + spec.runtimeNanos() : Long.MAX_VALUE;
            hardDeadline = startNanos + spec.timeLimitNanos();
            lastCompletion = rampEnd;
            active = spec.iodepth();
            for (int slot = 0; slot < spec.iodepth(); slot++) {
                issue(slot);
            }
        });
        return done;
    }

    /** Abandons the run: no new commands; outstanding ones end when the session closes. */
    void stop() {
        session.eventLoop().execute(() -> stopping = true);
    }

    private boolean finishedIssuing(long now) {
        return stopping || now >= deadline || now >= hardDeadline
                || (spec.size() > 0 && issuedBytes >= spec.size());
    }

    private void issue(int slot) {
        long now = System.nanoTime();
        if (finishedIssuing(now)) {
            if (--active == 0) {
                mainPhaseDone();
            }
            return;
        }
        Workload w = spec.workload();
        boolean isRead = w == Workload.RANDRW ? random.nextInt(100) < spec.rwmixread() : w.reads();
        long unit;
        if (w.random()) {
            unit = random.nextLong(units);
        } else {
            unit = seqCursor;
            seqCursor = (seqCursor + 1) % units;
        }
        if (busy != null) {
            int u = busy.nextClearBit((int) unit);
            if (u >= units) {
                u = busy.nextClearBit(0); // fewer than iodepth units are busy, so one is free
            }
            unit = u;
            busy.set(u);
        }
        long byteOffset = regionStart + unit * spec.blockSize();
        long lba = byteOffset / blockSize;
        issuedBytes += spec.blockSize();
        ByteBuf buf = buffers[slot];
        final long u = unit;
        if (isRead) {
            ByteBuf dst = null;
            if (spec.verify()) {
                dst = buf;
                dst.clear();
            }
            long t0 = System.nanoTime();
            session.read(lba, lbaPerIo, blockSize, dst).whenComplete((n, err) -> {
                long t1 = System.nanoTime();
                if (err == null) {
                    count(read, t0, t1);
                    if (spec.verify()) {
                        checkRead(buf, u, byteOffset);
                    }
                } else {
                    error(err);
                }
                release(u);
                issue(slot);
            });
        } else {
            int gen = 0;
            if (spec.verify()) {
                gen = nextGeneration();
                buf.clear();
                VerifyPattern.fill(buf, 0, spec.blockSize(), byteOffset, verifySeed, gen);
                buf.writerIndex(spec.blockSize());
            }
            final int g = gen;
            long t0 = System.nanoTime();
            session.write(lba, lbaPerIo, buf.readerIndex(0)).whenComplete((n, err) -> {
                long t1 = System.nanoTime();
                if (err == null) {
                    count(write, t0, t1);
                    if (committed != null) {
                        committed[(int) u] = g;
                    }
                } else {
                    error(err);
                    if (committed != null) {
                        committed[(int) u] = -1; // the block may hold either version now
                    }
                }
                release(u);
                issue(slot);
            });
        }
    }

    private int nextGeneration() {
        generation++;
        if (generation <= 0) {
            generation = 1;
        }
        return generation;
    }

    private void release(long unit) {
        if (busy != null) {
            busy.clear((int) unit);
        }
    }

    private void count(DirectionStats stats, long t0, long t1) {
        if (t0 >= rampEnd) {
            stats.record(spec.blockSize(), t1 - t0);
            lastCompletion = Math.max(lastCompletion, t1);
        }
    }

    private void error(Throwable err) {
        errors++;
        Throwable cause = err instanceof java.util.concurrent.CompletionException && err.getCause() != null
                ? err.getCause() : err;
        if (errorSamples.size() < MAX_SAMPLES) {
            errorSamples.add(cause.getMessage());
        }
        if (cause instanceof IOException || errors >= STOP_AFTER_ERRORS) {
            stopping = true; // the connection is gone or the target keeps failing: no point going on
        }
    }

    private void checkRead(ByteBuf buf, long unit, long byteOffset) {
        int expected = committed[(int) unit];
        VerifyPattern.Result r = VerifyPattern.check(buf, 0, spec.blockSize(), byteOffset, verifySeed, expected);
        switch (r.outcome()) {
            case EXACT -> exact++;
            case OTHER_GENERATION -> otherGeneration++;
            case ZEROS -> zeros++;
            case MISMATCH -> {
                mismatches++;
                if (mismatchSamples.size() < MAX_SAMPLES) {
                    mismatchSamples.add(session.url() + ": " + r.detail());
                }
            }
            default -> throw new IllegalStateException();
        }
    }

    private void mainPhaseDone() {
        if (spec.verify() && spec.workload().writes() && !stopping && System.nanoTime() < hardDeadline) {
            readBackCursor = 0;
            active = spec.iodepth();
            for (int slot = 0; slot < spec.iodepth(); slot++) {
                readBack(slot);
            }
            return;
        }
        finish();
    }

    private int readBackCursor;

    /** After a writing job: reads every block written here and checks it holds its last acknowledged generation. */
    private void readBack(int slot) {
        int unit = -1;
        while (readBackCursor < units) {
            int u = readBackCursor++;
            if (committed[u] > 0) {
                unit = u;
                break;
            }
        }
        if (unit < 0 || stopping || System.nanoTime() >= hardDeadline) {
            if (--active == 0) {
                finish();
            }
            return;
        }
        final int u = unit;
        long byteOffset = regionStart + (long) u * spec.blockSize();
        ByteBuf dst = buffers[slot];
        dst.clear();
        session.read(byteOffset / blockSize, lbaPerIo, blockSize, dst).whenComplete((n, err) -> {
            if (err == null) {
                readBack++;
                checkRead(dst, u, byteOffset);
            } else {
                error(err);
            }
            readBack(slot);
        });
    }

    private void finish() {
        for (ByteBuf b : buffers) {
            b.release();
        }
        VolumeResult.VerifyStats v = spec.verify()
                ? new VolumeResult.VerifyStats(exact, otherGeneration, zeros, mismatches, readBack,
                List.copyOf(mismatchSamples))
                : null;
        done.complete(new VolumeResult(session.url().toString(), read, write, Math.max(0, lastCompletion - rampEnd),
                errors, List.copyOf(errorSamples), v, session.windowStalls(), session.r2tsAnswered()));
    }
}
