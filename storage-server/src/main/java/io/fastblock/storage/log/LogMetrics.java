package io.fastblock.storage.log;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The log store's meters beyond {@code StorageMetrics}' appends and fsyncs: utilisation, cleaner
 * progress, folds, scrub progress, refused appends. Gauges read whichever store is open on the
 * registry now, so a store reopened on the same registry (tests, restarts in one JVM) reports itself.
 */
public final class LogMetrics {
    private static final Map<MeterRegistry, AtomicReference<LogStore>> CURRENT = new WeakHashMap<>();

    public final Counter cleanerBytesMoved;
    public final Counter cleanerSegmentsFreed;
    public final Counter cleanerWalkBytes;
    public final Counter cleanerYields;
    public final Counter folds;
    public final Counter scrubbedBytes;
    public final Counter scrubCorruptions;
    public final Counter noSpaceRejections;

    LogMetrics(MeterRegistry registry, LogStore store) {
        cleanerBytesMoved = Counter.builder("fastblock.log.cleaner.bytes.moved")
                .description("live bytes the cleaner copied out of old segments").register(registry);
        cleanerSegmentsFreed = Counter.builder("fastblock.log.cleaner.segments.freed")
                .description("log segments deleted by the cleaner").register(registry);
        cleanerWalkBytes = Counter.builder("fastblock.log.cleaner.walk.bytes")
                .description("bytes the cleaner read to find the records of segments it had no summary of").register(registry);
        cleanerYields = Counter.builder("fastblock.log.cleaner.yields")
                .description("segments the cleaner left half copied because foreground writes started").register(registry);
        folds = Counter.builder("fastblock.log.folds").description("chunks folded into their base file").register(registry);
        scrubbedBytes = Counter.builder("fastblock.log.scrub.bytes").description("live log bytes verified by the scrubber").register(registry);
        scrubCorruptions = Counter.builder("fastblock.log.scrub.corruptions")
                .description("extents the scrubber found failing CRC32C").register(registry);
        noSpaceRejections = Counter.builder("fastblock.log.nospace.rejections")
                .description("appends refused because the disk is full").register(registry);
        AtomicReference<LogStore> current;
        synchronized (CURRENT) {
            current = CURRENT.get(registry);
            if (current == null) {
                current = new AtomicReference<>();
                CURRENT.put(registry, current);
                AtomicReference<LogStore> ref = current;
                Gauge.builder("fastblock.log.utilisation", ref, r -> r.get() == null ? Double.NaN : r.get().utilisation())
                        .description("live data bytes / log bytes on disk").strongReference(true).register(registry);
                Gauge.builder("fastblock.log.live.bytes", ref, r -> r.get() == null ? Double.NaN : r.get().liveBytes().total())
                        .strongReference(true).register(registry);
                Gauge.builder("fastblock.log.disk.bytes", ref, r -> r.get() == null ? Double.NaN : r.get().diskBytes())
                        .strongReference(true).register(registry);
                Gauge.builder("fastblock.log.zeros.ahead.bytes", ref, r -> r.get() == null ? Double.NaN : r.get().zerosAheadBytes())
                        .description("zeros written ahead of the log's records since start (LogPreallocator)")
                        .strongReference(true).register(registry);
                Gauge.builder("fastblock.log.segments.reused", ref, r -> r.get() == null ? Double.NaN : r.get().reusedSegmentFiles())
                        .description("log segments started on a retired segment's file since start (SegmentSet)")
                        .strongReference(true).register(registry);
            }
        }
        current.set(store);
    }
}
