package io.fastblock.storage.chain;

import io.fastblock.protocol.ChunkId;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;

/**
 * The writes a replica applied most recently, by (chunk, sequence), with the future of their local
 * apply. A write resent after a chain change that is already here is not applied again (which could
 * put an old write over a newer one); its answer waits for the first apply instead. The window is
 * bounded: it only has to cover what a predecessor can resend, which its bounded sent list limits.
 *
 * <p>A ring in arrival order, not a hash map: every write a replica orders is recorded, but a
 * lookup is almost never needed. A head draws increasing sequences and forwards them in order, so
 * a write whose sequence is above every one recorded cannot be here, and only resends (after a
 * chain change or a broken link) are looked for, newest first. Recording is then three array
 * stores, where the map cost a key, an entry and two hash lookups per write, with their cache
 * misses (about 2 µs of a 4 KiB write's ~70 µs of server CPU, docs/performance.md).
 *
 * <p>Not thread-safe: used under its replica's lock, like the {@link SentList}.
 */
final class AppliedWindow {
    private static final int INITIAL = 64;

    private final int capacity;
    private long[] sequences;
    private ChunkId[] chunks;
    private CompletableFuture<Void>[] futures;
    /** Entries recorded so far (capped at the capacity), and the slot the next one takes. */
    private int size;
    private int next;
    /** The highest sequence ever recorded: nothing above it is in the window. */
    private long highest = Long.MIN_VALUE;

    AppliedWindow(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("applied window capacity must be positive, got " + capacity);
        }
        this.capacity = capacity;
        int length = Math.min(INITIAL, capacity);
        this.sequences = new long[length];
        this.chunks = new ChunkId[length];
        @SuppressWarnings("unchecked")
        CompletableFuture<Void>[] f = new CompletableFuture[length];
        this.futures = f;
    }

    /** The local apply of (chunk, sequence) if it is among the last {@code capacity} recorded, else null. */
    CompletableFuture<Void> get(ChunkId chunk, long sequence) {
        if (sequence > highest) {
            return null;
        }
        int slot = next;
        for (int i = 0; i < size; i++) {
            slot = (slot == 0 ? sequences.length : slot) - 1;
            if (sequences[slot] == sequence && chunks[slot].equals(chunk)) {
                return futures[slot];
            }
        }
        return null;
    }

    /** Records (chunk, sequence); the oldest entry makes room once the window is full. */
    void put(ChunkId chunk, long sequence, CompletableFuture<Void> local) {
        if (next == sequences.length && sequences.length < capacity) {
            grow();
        }
        if (next == sequences.length) {
            next = 0;
        }
        sequences[next] = sequence;
        chunks[next] = chunk;
        futures[next] = local;
        next++;
        if (size < sequences.length) {
            size++;
        }
        highest = Math.max(highest, sequence);
    }

    /** Only while the ring has never wrapped: its entries then sit in slots 0 .. size - 1. */
    private void grow() {
        int length = (int) Math.min(capacity, 2L * sequences.length);
        sequences = Arrays.copyOf(sequences, length);
        chunks = Arrays.copyOf(chunks, length);
        futures = Arrays.copyOf(futures, length);
    }

    int size() {
        return size;
    }
}
