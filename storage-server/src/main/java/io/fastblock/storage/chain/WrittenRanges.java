package io.fastblock.storage.chain;

import io.fastblock.protocol.ChunkId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Byte ranges per chunk written by forwarded writes since a node started catching up. Data copied
 * from the tail must not land on these ranges: the forwarded write is newer than (or equal to) any
 * copy of them. Adjacent and overlapping ranges are merged. Not thread-safe: used under the
 * group's lock.
 */
final class WrittenRanges {
    private final Map<ChunkId, TreeMap<Long, Long>> byChunk = new HashMap<>();

    void add(ChunkId chunk, long offset, long length) {
        TreeMap<Long, Long> ranges = byChunk.computeIfAbsent(chunk, c -> new TreeMap<>());
        long start = offset;
        long end = offset + length;
        Map.Entry<Long, Long> before = ranges.floorEntry(start);
        if (before != null && before.getValue() >= start) {
            start = before.getKey();
            end = Math.max(end, before.getValue());
            ranges.remove(before.getKey());
        }
        Map.Entry<Long, Long> next = ranges.ceilingEntry(start);
        while (next != null && next.getKey() <= end) {
            end = Math.max(end, next.getValue());
            ranges.remove(next.getKey());
            next = ranges.ceilingEntry(start);
        }
        ranges.put(start, end);
    }

    /** The parts of {@code [offset, offset+length)} no recorded range covers, as {offset, length} pairs in order. */
    List<long[]> uncovered(ChunkId chunk, long offset, long length) {
        List<long[]> gaps = new ArrayList<>();
        TreeMap<Long, Long> ranges = byChunk.get(chunk);
        long pos = offset;
        long end = offset + length;
        if (ranges != null) {
            Map.Entry<Long, Long> first = ranges.floorEntry(offset);
            Long from = first != null && first.getValue() > offset ? first.getKey() : ranges.ceilingKey(offset);
            if (from != null) {
                for (Map.Entry<Long, Long> r : ranges.tailMap(from, true).entrySet()) {
                    if (r.getKey() >= end) {
                        break;
                    }
                    if (r.getKey() > pos) {
                        gaps.add(new long[]{pos, r.getKey() - pos});
                    }
                    pos = Math.max(pos, r.getValue());
                }
            }
        }
        if (pos < end) {
            gaps.add(new long[]{pos, end - pos});
        }
        return gaps;
    }

    int rangeCount() {
        return byChunk.values().stream().mapToInt(TreeMap::size).sum();
    }
}
