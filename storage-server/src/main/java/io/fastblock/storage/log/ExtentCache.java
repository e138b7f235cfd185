package io.fastblock.storage.log;

import io.fastblock.protocol.ChunkId;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * The extents of recently used chunks, in memory, exactly as the committed index holds them, so
 * that applying a write is map lookups and the index only receives a write batch. A lookup in
 * RocksDB went backwards ({@code seekForPrev}) through a memtable of many versions of the same
 * keys: that was 60% of the commit thread's CPU under 4 KiB writes and 78% under 1 MiB writes.
 *
 * <p>Bounded by the number of extents it holds; the least recently used chunks are dropped and
 * read back from the index (one forward scan) when next used. Not thread-safe: {@link ExtentIndex}
 * uses it under its own lock.
 */
final class ExtentCache {
    /** ~50-100 bytes of heap per cached extent (leaves fill to half or more), so the default holds 13-25 MiB. */
    static final long DEFAULT_CAPACITY = 1 << 18;

    /** One chunk's extents by chunk offset (see {@link ExtentTable}). */
    static final class Chunk {
        private final ExtentTable table = new ExtentTable();

        /** Extents overlapping {@code [start, end)} in offset order, copies, so the caller may change the chunk. */
        List<Extent> overlapping(long start, long end) {
            return table.overlapping(start, end);
        }

        /** The extent that ends exactly at {@code offset}, if the one just before it does. */
        Extent endingAt(long offset) {
            return table.endingAt(offset);
        }

        int size() {
            return table.size();
        }
    }

    private final long capacity;
    private final LinkedHashMap<ChunkId, Chunk> chunks = new LinkedHashMap<>(256, 0.75f, true);
    private long extents;

    ExtentCache(long capacity) {
        if (capacity < 0) {
            throw new IllegalArgumentException("capacity must be >= 0: " + capacity);
        }
        this.capacity = capacity;
    }

    /** The cached chunk, or null when it must be loaded. */
    Chunk get(ChunkId chunk) {
        return chunks.get(chunk);
    }

    /** Starts caching a chunk read from the index; the caller then {@link #put}s its extents into it. */
    Chunk add(ChunkId chunk) {
        Chunk c = new Chunk();
        chunks.put(chunk, c);
        return c;
    }

    void put(Chunk c, Extent e) {
        if (c.table.put(e)) {
            extents++;
        }
    }

    void remove(Chunk c, long offset) {
        if (c.table.remove(offset)) {
            extents--;
        }
    }

    /**
     * Drops least recently used chunks until the cache is within its capacity. Called only between
     * batches: a chunk dropped while a batch is being built would be read back without the batch's
     * changes.
     */
    void trim() {
        Iterator<Chunk> it = chunks.values().iterator();
        while (extents > capacity && it.hasNext()) {
            extents -= it.next().size();
            it.remove();
        }
    }

    /** Forgets everything (after a failed index write, whose changes are already in the maps). */
    void clear() {
        chunks.clear();
        extents = 0;
    }

    long extents() {
        return extents;
    }

    int chunks() {
        return chunks.size();
    }
}
