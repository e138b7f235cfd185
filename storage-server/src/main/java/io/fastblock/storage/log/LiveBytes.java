package io.fastblock.storage.log;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Live data bytes per segment: the bytes the index reads from it. Not persisted: every open
 * rebuilds it from a scan of the index (after replay), so it is exact after any restart; while
 * running, every index change reports its per-segment delta here. The cleaner picks segments
 * with the lowest live ratio.
 */
public final class LiveBytes {
    private final ConcurrentHashMap<Long, AtomicLong> live = new ConcurrentHashMap<>();
    private final AtomicLong total = new AtomicLong();

    void seed(Map<Long, Long> bySegment) {
        live.clear();
        total.set(0);
        bySegment.forEach((seg, bytes) -> {
            live.put(seg, new AtomicLong(bytes));
            total.addAndGet(bytes);
        });
    }

    void apply(Map<Long, Long> delta) {
        delta.forEach((seg, bytes) -> {
            live.computeIfAbsent(seg, s -> new AtomicLong()).addAndGet(bytes);
            total.addAndGet(bytes);
        });
    }

    void forget(long segment) {
        AtomicLong v = live.remove(segment);
        if (v != null) {
            total.addAndGet(-v.get());
        }
    }

    public long of(long segment) {
        AtomicLong v = live.get(segment);
        return v == null ? 0 : v.get();
    }

    /** Live data bytes over all segments. */
    public long total() {
        return total.get();
    }

    public Map<Long, Long> snapshot() {
        Map<Long, Long> out = new HashMap<>();
        live.forEach((k, v) -> out.put(k, v.get()));
        return out;
    }
}
