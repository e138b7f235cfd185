package io.fastblock.gateway.client;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Per-volume counters of the FAST client, counted per storage request (a volume request spanning
 * chunks counts once per chunk). Meter names: {@code fastblock.gateway.reads} and
 * {@code fastblock.gateway.read.bytes} tagged route=head|middle|tail|zero-fill|read-ahead (a read handed to
 * the read-ahead, no storage request of its own; if its window is dropped before it lands, the read
 * is sent after all and counted again by its route),
 * {@code fastblock.gateway.writes} / {@code .write.bytes} tagged route=head,
 * {@code fastblock.gateway.requests} tagged op and pattern=random|sequential (per volume request),
 * {@code fastblock.gateway.retries} tagged reason; all tagged volume. And per volume request,
 * {@code fastblock.gateway.latency} tagged op=read|write: from the gateway's call on the volume to its
 * answer (storage, retries, a lease to take; not the QoS wait before it), with fixed buckets so a
 * scraper can tell each volume's tail latency.
 */
public final class ClientMetrics {
    private final Counter readsHead;
    private final Counter readsMiddle;
    private final Counter readsZero;
    private final Counter readBytesHead;
    private final Counter readBytesMiddle;
    private final Counter readBytesZero;
    private final Counter readsAhead;
    private final Counter readBytesAhead;
    private final Counter writesHead;
    private final Counter writeBytesHead;
    private final Counter readRandom;
    private final Counter readSequential;
    private final Counter writeRandom;
    private final Counter writeSequential;
    private final Timer readLatency;
    private final Timer writeLatency;
    /** Latency buckets: a few per decade from a page-cache read to the initiator's 15 s abort. */
    static final Duration[] LATENCY_BUCKETS = {Duration.ofNanos(100_000), Duration.ofNanos(250_000),
        Duration.ofNanos(500_000), Duration.ofMillis(1), Duration.ofNanos(2_500_000), Duration.ofMillis(5),
        Duration.ofMillis(10), Duration.ofMillis(25), Duration.ofMillis(50), Duration.ofMillis(100),
        Duration.ofMillis(250), Duration.ofSeconds(1), Duration.ofSeconds(5), Duration.ofSeconds(15)};
    private final MeterRegistry registry;
    private final String volume;
    /** Set by {@link #remove}; meters registered on first use are not registered after it. */
    private boolean removed;

    public ClientMetrics(MeterRegistry registry, String volume) {
        this.registry = registry;
        this.volume = volume;
        readsHead = counter("fastblock.gateway.reads", "route", "head");
        readsMiddle = counter("fastblock.gateway.reads", "route", "middle");
        readsZero = counter("fastblock.gateway.reads", "route", "zero-fill");
        readBytesHead = counter("fastblock.gateway.read.bytes", "route", "head");
        readBytesMiddle = counter("fastblock.gateway.read.bytes", "route", "middle");
        readBytesZero = counter("fastblock.gateway.read.bytes", "route", "zero-fill");
        readsAhead = counter("fastblock.gateway.reads", "route", "read-ahead");
        readBytesAhead = counter("fastblock.gateway.read.bytes", "route", "read-ahead");
        writesHead = counter("fastblock.gateway.writes", "route", "head");
        writeBytesHead = counter("fastblock.gateway.write.bytes", "route", "head");
        readRandom = registry.counter("fastblock.gateway.requests", "volume", volume, "op", "read", "pattern", "random");
        readSequential = registry.counter("fastblock.gateway.requests", "volume", volume, "op", "read", "pattern", "sequential");
        writeRandom = registry.counter("fastblock.gateway.requests", "volume", volume, "op", "write", "pattern", "random");
        writeSequential = registry.counter("fastblock.gateway.requests", "volume", volume, "op", "write", "pattern", "sequential");
        readLatency = latency(registry, volume, "read");
        writeLatency = latency(registry, volume, "write");
    }

    private static Timer latency(MeterRegistry registry, String volume, String op) {
        return Timer.builder("fastblock.gateway.latency").tags("volume", volume, "op", op)
                .description("a volume request's time in the gateway's client, to its answer")
                .serviceLevelObjectives(LATENCY_BUCKETS)
                .register(registry);
    }

    /** A volume read that started at {@code startNanos} ({@link System#nanoTime()}) was answered. */
    void readDone(long startNanos) {
        readLatency.record(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS);
    }

    void writeDone(long startNanos) {
        writeLatency.record(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS);
    }

    /**
     * Takes every {@code fastblock.gateway.*} meter of this volume out of the registry: the last device
     * of the volume on this gateway closed. Without it a gateway would keep the meters (and serve them) of
     * every volume it ever opened.
     */
    synchronized void remove() {
        removed = true;
        for (io.micrometer.core.instrument.Meter m : registry.getMeters()) {
            io.micrometer.core.instrument.Meter.Id id = m.getId();
            if (id.getName().startsWith("fastblock.gateway.") && volume.equals(id.getTag("volume"))) {
                registry.remove(m);
            }
        }
    }

    /** The gateway-wide chunk-map meters: slots in use (an upper bound of cached chunks) and evictions. */
    static void bindChunkMaps(MeterRegistry registry, ChunkMapBudget budget) {
        io.micrometer.core.instrument.Gauge.builder("fastblock.gateway.chunk.map.entries", budget, ChunkMapBudget::slots)
                .description("chunk-map cache slots in use across all volumes (at most --chunk-map-entries)")
                .register(registry);
        io.micrometer.core.instrument.FunctionCounter.builder("fastblock.gateway.chunk.map.evictions", budget,
                        ChunkMapBudget::evictions)
                .description("cached chunks dropped because the chunk-map budget was full")
                .register(registry);
    }

    private Counter counter(String name, String tag, String value) {
        return registry.counter(name, "volume", volume, tag, value);
    }

    /**
     * Counts into a meter registered on first use, unless the volume's meters were removed: a request
     * finishing after the last close would otherwise bring a meter back for good. Under the same lock
     * as {@link #remove}, so a registration either comes before its sweep or not at all.
     */
    private synchronized void countLate(String name, String tag, String value, double amount) {
        if (!removed) {
            counter(name, tag, value).increment(amount);
        }
    }

    void read(ReplicaRole role, int bytes) {
        if (role == ReplicaRole.TAIL) {
            // Only retries reach the tail: registered when first used rather than shown as a zero.
            countLate("fastblock.gateway.reads", "route", "tail", 1);
            countLate("fastblock.gateway.read.bytes", "route", "tail", bytes);
        } else if (role == ReplicaRole.MIDDLE) {
            readsMiddle.increment();
            readBytesMiddle.increment(bytes);
        } else {
            readsHead.increment();
            readBytesHead.increment(bytes);
        }
    }

    /** A read answered by the read-ahead (no storage request of its own). */
    void readAhead(int bytes) {
        readsAhead.increment();
        readBytesAhead.increment(bytes);
    }

    void zeroFill(int bytes) {
        readsZero.increment();
        readBytesZero.increment(bytes);
    }

    void write(int bytes) {
        writesHead.increment();
        writeBytesHead.increment(bytes);
    }

    void classified(boolean read, AccessPattern pattern) {
        boolean seq = pattern == AccessPattern.SEQUENTIAL;
        (read ? (seq ? readSequential : readRandom) : (seq ? writeSequential : writeRandom)).increment();
    }

    void retry(String reason) {
        countLate("fastblock.gateway.retries", "reason", reason, 1);
    }
}
