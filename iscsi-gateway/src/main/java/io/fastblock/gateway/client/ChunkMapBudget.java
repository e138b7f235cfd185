package io.fastblock.gateway.client;

/**
 * How many chunk-map entries all of a gateway's caches hold together ({@code --chunk-map-entries}).
 * Each entry a {@link ChunkMapCache} adds takes a slot at the end of one first-in first-out ring;
 * when the ring is full, the oldest slot is taken back and its chunk dropped from its cache, whose
 * next use of that chunk asks the namenode again (one round trip per chunk, so a plain FIFO is good
 * enough and costs nothing on a hit).
 *
 * <p>A slot may outlive its entry: the route was refused and dropped, or the cache was cleared or
 * dropped with its volume. Taking such a slot back drops nothing, and slots of caches nobody uses
 * any more age out of the ring without a close to call. Every entry a cache holds has a slot, so the
 * caches of all volumes together never hold more than {@code limit} entries.
 */
public final class ChunkMapBudget {
    /** Default {@code --chunk-map-entries}: 16 TiB of 64 MiB chunks, 22 MiB of heap measured when full. */
    public static final int DEFAULT_LIMIT = 262_144;

    private final int limit;
    // Two parallel arrays instead of slot objects: 12 bytes per slot. They grow to the limit, never shrink.
    private ChunkMapCache[] owners;
    private long[] indexes;
    private int oldest;
    private int size;
    private long evictions;

    public ChunkMapBudget(int limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("--chunk-map-entries must be at least 1, got " + limit);
        }
        this.limit = limit;
        int initial = Math.min(limit, 1024);
        owners = new ChunkMapCache[initial];
        indexes = new long[initial];
    }

    /** Records that {@code cache} added chunk {@code index}; drops the oldest entry if the ring is full. */
    void admit(ChunkMapCache cache, long index) {
        ChunkMapCache victim = null;
        long victimIndex = 0;
        synchronized (this) {
            if (size == limit) {
                victim = owners[oldest];
                victimIndex = indexes[oldest];
                owners[oldest] = null;
                oldest = (oldest + 1) % owners.length;
                size--;
                evictions++;
            } else if (size == owners.length) {
                grow();
            }
            int at = (oldest + size) % owners.length;
            owners[at] = cache;
            indexes[at] = index;
            size++;
        }
        if (victim != null) {
            // Outside the lock: the cache's map is not touched while the ring is held.
            victim.evict(victimIndex);
        }
    }

    /** Takes back every slot of {@code cache} (it was cleared), so they do not drop its new entries later. */
    synchronized void forget(ChunkMapCache cache) {
        int kept = 0;
        int n = owners.length;
        for (int i = 0; i < size; i++) {
            int from = (oldest + i) % n;
            if (owners[from] != cache) {
                int to = (oldest + kept) % n;
                owners[to] = owners[from];
                indexes[to] = indexes[from];
                kept++;
            }
        }
        for (int i = kept; i < size; i++) {
            owners[(oldest + i) % n] = null;
        }
        size = kept;
    }

    private void grow() {
        int length = (int) Math.min(limit, 2L * owners.length);
        ChunkMapCache[] o = new ChunkMapCache[length];
        long[] x = new long[length];
        for (int i = 0; i < size; i++) {
            int from = (oldest + i) % owners.length;
            o[i] = owners[from];
            x[i] = indexes[from];
        }
        owners = o;
        indexes = x;
        oldest = 0;
    }

    public int limit() {
        return limit;
    }

    /** Slots in use: at least the number of entries all caches hold, at most {@link #limit()}. */
    public synchronized int slots() {
        return size;
    }

    /** Entries dropped because the ring was full (the chunk's next use asks the namenode again). */
    public synchronized long evictions() {
        return evictions;
    }
}
