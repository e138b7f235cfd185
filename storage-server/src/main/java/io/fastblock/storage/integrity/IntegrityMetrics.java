package io.fastblock.storage.integrity;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicLong;

/** Meters of checksums, repairs, scrubbing and resync, registered in the server's registry. */
public final class IntegrityMetrics {
    /** Bad copies replaced with good data from another replica (chunk blocks or log extents). */
    public final Counter repairs;
    public final Counter repairedBytes;
    /** Bad stretches found (by reads or the scrubber), repaired or not. */
    public final Counter corruptFound;
    /** Reads answered from another replica because the local copy was bad or resyncing. */
    public final Counter remoteReads;
    public final Counter scrubbedBytes;
    public final Counter scrubbedChunks;
    public final Counter scrubPasses;
    public final Counter resyncedChunks;
    /** Resynced chunks for which only the tail's changes above the forced sequence were copied. */
    public final Counter resyncedByDelta;
    public final Counter resyncedBytes;
    private final AtomicLong lastFullPass = new AtomicLong();
    private final AtomicLong resyncPending = new AtomicLong();

    public IntegrityMetrics(MeterRegistry registry) {
        repairs = Counter.builder("fastblock.integrity.repairs").description("bad copies repaired from a good replica").register(registry);
        repairedBytes = Counter.builder("fastblock.integrity.repaired.bytes").register(registry);
        corruptFound = Counter.builder("fastblock.integrity.corrupt.found").description("bad stretches found by reads or scrubbing").register(registry);
        remoteReads = Counter.builder("fastblock.integrity.remote.reads").description("reads answered by another replica").register(registry);
        scrubbedBytes = Counter.builder("fastblock.scrub.bytes").description("bytes verified by the scrubber").register(registry);
        scrubbedChunks = Counter.builder("fastblock.scrub.chunks").register(registry);
        scrubPasses = Counter.builder("fastblock.scrub.passes").description("full passes over every chunk").register(registry);
        resyncedChunks = Counter.builder("fastblock.resync.chunks").description("chunks brought back in line with their tail").register(registry);
        resyncedByDelta = Counter.builder("fastblock.resync.delta.chunks")
                .description("resynced chunks copied only where the tail's log named changes").register(registry);
        resyncedBytes = Counter.builder("fastblock.resync.bytes").register(registry);
        Gauge.builder("fastblock.scrub.last.full.pass", lastFullPass, AtomicLong::get)
                .description("end of the last full scrub pass, epoch milliseconds (0: none yet)").register(registry);
        Gauge.builder("fastblock.resync.pending", resyncPending, AtomicLong::get)
                .description("chunks still waiting for resync").register(registry);
    }

    public long lastFullPassMillis() {
        return lastFullPass.get();
    }

    void fullPassDone(long epochMillis) {
        lastFullPass.set(epochMillis);
        scrubPasses.increment();
    }

    void resyncPending(long chunks) {
        resyncPending.set(chunks);
    }

    public long resyncPending() {
        return resyncPending.get();
    }
}
