package io.fastblock.gateway.client;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * One view of a volume's layers (docs/snapshots.md): their ids bottom first and a chunk map cache
 * per layer. Writes go to the top, with the top's own cache, so a route learnt for one top is
 * never used to write another. A snapshot, clone or revert replaces the whole view (the volume
 * learns it from the namenode); lower layers are sealed, so their caches never go stale.
 */
public final class LayerStack {
    private final List<Long> ids;
    private final Map<Long, ChunkMapCache> maps;

    /** {@code maps} has a cache for each id in {@code ids}. */
    public LayerStack(List<Long> ids, Map<Long, ChunkMapCache> maps) {
        if (ids.isEmpty()) {
            throw new IllegalArgumentException("a volume has at least one layer");
        }
        for (long id : ids) {
            if (!maps.containsKey(id)) {
                throw new IllegalArgumentException("no chunk map for layer " + id);
            }
        }
        this.ids = List.copyOf(ids);
        this.maps = Map.copyOf(maps);
    }

    public static LayerStack single(long id, ChunkMapCache map) {
        return new LayerStack(List.of(id), Map.of(id, map));
    }

    public long top() {
        return ids.get(ids.size() - 1);
    }

    public ChunkMapCache topMap() {
        return maps.get(top());
    }

    /** Whether lower layers exist (reads may fall through, partial blocks need read-modify-write). */
    public boolean layered() {
        return ids.size() > 1;
    }

    public List<Long> ids() {
        return ids;
    }

    /** The layers from the top down. */
    public List<Long> topDown() {
        List<Long> out = new ArrayList<>(ids);
        Collections.reverse(out);
        return out;
    }

    public ChunkMapCache map(long layer) {
        ChunkMapCache m = maps.get(layer);
        if (m == null) {
            throw new IllegalArgumentException("layer " + layer + " is not in " + ids);
        }
        return m;
    }

    /** Caches of this view that {@code next} keeps (same layer below its top): sealed maps stay valid. */
    public Map<Long, ChunkMapCache> reusableFor(List<Long> next) {
        Map<Long, ChunkMapCache> out = new java.util.HashMap<>();
        for (int i = 0; i < next.size() - 1; i++) {
            long id = next.get(i);
            // A layer that was our top may have taken allocations since we cached "unallocated":
            // only layers that were already sealed below our top are reused.
            if (maps.containsKey(id) && id != top()) {
                out.put(id, maps.get(id));
            }
        }
        return out;
    }

    @Override
    public String toString() {
        return "layers " + ids;
    }
}
