package io.fastblock.storage.chain;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Meters of the replication layer: latency and bytes per operation and chain role (histograms),
 * resends, reconfigurations, promotions to tail, catch-up copy bytes, and the sent lists' fill.
 */
public final class ChainMetrics {
    private final MeterRegistry registry;
    /** By operation, then role: looked up for every operation, so no key is built per call. */
    private final ConcurrentHashMap<String, ConcurrentHashMap<String, Timer>> timers = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, ConcurrentHashMap<String, DistributionSummary>> sizes = new ConcurrentHashMap<>();
    public final Counter resends;
    public final Counter reconfigurations;
    public final Counter promotions;
    public final Counter catchUpBytes;
    public final Counter catchUpsCompleted;
    /** Catch-ups started over because the group record was written again while they ran. */
    public final Counter catchUpRestarts;
    /** Bytes catch-up attempts set out to copy (a delta catch-up plans only the changed ranges). */
    public final Counter catchUpPlannedBytes;
    public final Counter duplicatesSkipped;
    public final Counter sentListFull;
    public final Counter ackTimeouts;
    public final Counter writesReceived;
    public final AtomicLong sentEntries = new AtomicLong();
    public final AtomicLong sentBytes = new AtomicLong();

    public ChainMetrics(MeterRegistry registry) {
        this.registry = registry;
        resends = Counter.builder("fastblock.chain.resends").description("writes resent to a successor after a chain change or link failure").register(registry);
        reconfigurations = Counter.builder("fastblock.chain.reconfigurations").description("new chain versions applied").register(registry);
        promotions = Counter.builder("fastblock.chain.promotions").description("times this node became tail and made its copy durable").register(registry);
        catchUpBytes = Counter.builder("fastblock.chain.catchup.bytes").description("bytes copied from a tail while joining").register(registry);
        catchUpsCompleted = Counter.builder("fastblock.chain.catchup.completed").register(registry);
        catchUpRestarts = Counter.builder("fastblock.chain.catchup.restarts")
                .description("catch-ups started over: the group record was written again while they ran").register(registry);
        catchUpPlannedBytes = Counter.builder("fastblock.chain.catchup.planned.bytes")
                .description("bytes catch-ups set out to copy (whole chunks, or only the changes for a delta)").register(registry);
        duplicatesSkipped = Counter.builder("fastblock.chain.duplicates.skipped").description("resent writes already applied here").register(registry);
        sentListFull = Counter.builder("fastblock.chain.sent.full").description("admissions that waited for room in a sent list").register(registry);
        ackTimeouts = Counter.builder("fastblock.chain.ack.timeouts").register(registry);
        writesReceived = Counter.builder("fastblock.chain.writes.received").description("writes taken off the wire for admission").register(registry);
        io.micrometer.core.instrument.Gauge.builder("fastblock.chain.sent.entries", sentEntries, AtomicLong::get).register(registry);
        io.micrometer.core.instrument.Gauge.builder("fastblock.chain.sent.bytes", sentBytes, AtomicLong::get).register(registry);
    }

    /**
     * Chunks catch-ups took whole instead of by delta, by why ({@code no_sequence}: none known here, as
     * after a crash in the chunk's last checkpoint interval; {@code longer_here}; {@code tail_cannot_tell};
     * {@code changes_gone}: the tail's log no longer holds them; {@code not_at_tail}: the tail does not
     * list it, so it is given back here, not copied): a return that should cost a delta and copies
     * whole chunks shows here.
     */
    public Counter catchUpWholeChunks(String reason) {
        return Counter.builder("fastblock.chain.catchup.whole.chunks").tag("reason", reason)
                .description("chunks catch-ups took whole (copied, or given back) instead of by delta, by reason").register(registry);
    }

    public MeterRegistry registry() {
        return registry;
    }

    /** Latency of one operation as served in one role. */
    public Timer latency(String op, String role) {
        ConcurrentHashMap<String, Timer> byRole = timers.computeIfAbsent(op, k -> new ConcurrentHashMap<>());
        Timer t = byRole.get(role);
        return t != null ? t : byRole.computeIfAbsent(role, k -> Timer.builder("fastblock.storage.op.latency")
                .tag("op", op).tag("role", role).publishPercentileHistogram().register(registry));
    }

    /** Payload bytes of one operation as served in one role. */
    public DistributionSummary bytes(String op, String role) {
        ConcurrentHashMap<String, DistributionSummary> byRole = sizes.computeIfAbsent(op, k -> new ConcurrentHashMap<>());
        DistributionSummary d = byRole.get(role);
        return d != null ? d : byRole.computeIfAbsent(role, k -> DistributionSummary.builder("fastblock.storage.op.bytes")
                .tag("op", op).tag("role", role).baseUnit("bytes").publishPercentileHistogram().register(registry));
    }
}
