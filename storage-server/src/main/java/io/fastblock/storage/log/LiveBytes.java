package io.fastblock.storage.log;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Live data bytes per segment, kept as writes supersede older extents. Seeded from an index
 * scan at open. The (later) cleaner picks segments with the lowest live ratio.
 */
public final class LiveBytes {
    private final ConcurrentHashMap<Long, AtomicLong> live = new ConcurrentHashMap<>();

    void seed(Map<Long, Long> bySegment) {
        live.clear();
        bySegment.forEach((seg, bytes) -> live.put(seg, new AtomicLong(bytes)));
    }

    void record(List<ExtentIndex.IndexedWrite> writes, Map<Long, Long> dead) {
        for (ExtentIndex.IndexedWrite w : writes) {
            live.computeIfAbsent(w.segment(), s -> new AtomicLong()).addAndGet(w.length());
        }
        dead.forEach((seg, bytes) -> live.computeIfAbsent(seg, s -> new AtomicLong()).addAndGet(-bytes));
    }

    public long of(long segment) {
        AtomicLong v = live.get(segment);
        return v == null ? 0 : v.get();
    }
}
