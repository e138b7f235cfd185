package io.fastblock.storage;

import io.fastblock.storage.io.MappingBudget;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/** The storage server's meters, in one place so tests and the (later) exporter read the same figures. */
public final class StorageMetrics {
    private final MeterRegistry registry;
    public final Counter writes;
    public final Counter reads;
    public final Counter bytesWritten;
    public final Counter bytesRead;
    public final Counter logAppends;
    public final Counter logFsyncs;
    public final Counter corruptReads;
    public final Counter trims;
    public final Counter bytesTrimmed;
    public final Counter extentsRequests;
    public final Counter fences;
    /** Time in log segment fsyncs, and a whole group commit (write, fsync, index, completing the writers). */
    public final Timer logFsyncTime;
    public final Timer logCommitTime;

    public StorageMetrics() {
        this(new SimpleMeterRegistry());
    }

    public StorageMetrics(MeterRegistry registry) {
        this.registry = registry;
        writes = Counter.builder("fastblock.storage.writes").description("write requests served").register(registry);
        reads = Counter.builder("fastblock.storage.reads").description("read requests served").register(registry);
        bytesWritten = Counter.builder("fastblock.storage.bytes.written").register(registry);
        bytesRead = Counter.builder("fastblock.storage.bytes.read").register(registry);
        logAppends = Counter.builder("fastblock.log.appends").description("records appended to the log").register(registry);
        logFsyncs = Counter.builder("fastblock.log.fsyncs").description("fsyncs of log segments").register(registry);
        corruptReads = Counter.builder("fastblock.log.corrupt.reads").register(registry);
        trims = Counter.builder("fastblock.storage.trims").description("trim requests served").register(registry);
        bytesTrimmed = Counter.builder("fastblock.storage.bytes.trimmed").description("bytes given back by trims").register(registry);
        extentsRequests = Counter.builder("fastblock.storage.extents.requests").description("EXTENTS requests and reads with extents served").register(registry);
        fences = Counter.builder("fastblock.storage.fences").description("FENCE requests answered").register(registry);
        logFsyncTime = Timer.builder("fastblock.log.fsync.time").description("one fsync of a log segment").register(registry);
        logCommitTime = Timer.builder("fastblock.log.commit.time")
                .description("one group commit: write, fsync, index update, completing its writers").register(registry);
        Gauge.builder("fastblock.log.writes.per.fsync", this, StorageMetrics::writesPerFsync).register(registry);
    }

    public MeterRegistry registry() {
        return registry;
    }

    /**
     * Meters of the chunk files a store keeps mapped for large reads. Many evictions mean the chunks
     * read in large reads outnumber {@code --mapped-chunks}: those reads copy.
     */
    public void bindMappedChunks(MappingBudget mapped) {
        Gauge.builder("fastblock.chunk.mapped.files", mapped, MappingBudget::mapped)
                .description("chunk files mapped for large reads").register(registry);
        FunctionCounter.builder("fastblock.chunk.mapped.evictions", mapped, MappingBudget::evictions)
                .description("chunk files unmapped to make room for others").register(registry);
    }

    /** Log appends made durable per fsync so far: above 1 means group commit is sharing fsyncs. */
    public double writesPerFsync() {
        double f = logFsyncs.count();
        return f == 0 ? 0 : logAppends.count() / f;
    }
}
