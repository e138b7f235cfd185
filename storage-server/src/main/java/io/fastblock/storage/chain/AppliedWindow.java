package io.fastblock.storage.chain;

import io.fastblock.protocol.ChunkId;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The writes a replica applied most recently, by (chunk, sequence), with the future of their local
 * apply. A write resent after a chain change that is already here is not applied again (which could
 * put an old write over a newer one); its answer waits for the first apply instead. The window is
 * bounded: it only has to cover what a predecessor can resend, which its bounded sent list limits.
 */
final class AppliedWindow {
    private record Key(ChunkId chunk, long sequence) {
        // Written out, not generated (see ChunkId): looked up for every write a replica orders.
        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && k.sequence == sequence && k.chunk.equals(chunk);
        }

        @Override
        public int hashCode() {
            return Long.hashCode(sequence) * 31 + chunk.hashCode();
        }
    }

    private final Map<Key, CompletableFuture<Void>> applied;

    AppliedWindow(int capacity) {
        this.applied = new LinkedHashMap<>(Math.min(capacity, 1 << 16), 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Key, CompletableFuture<Void>> eldest) {
                return size() > capacity;
            }
        };
    }

    synchronized CompletableFuture<Void> get(ChunkId chunk, long sequence) {
        return applied.get(new Key(chunk, sequence));
    }

    synchronized void put(ChunkId chunk, long sequence, CompletableFuture<Void> local) {
        applied.put(new Key(chunk, sequence), local);
    }

    synchronized int size() {
        return applied.size();
    }
}
