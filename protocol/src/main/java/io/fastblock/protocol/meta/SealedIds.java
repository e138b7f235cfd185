package io.fastblock.protocol.meta;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The volume/layer ids that are sealed for good, as sorted disjoint ranges, kept in the one znode
 * {@link ZkPaths#SEALED_IDS} (text {@code "3-7,9,12-40"}). Once the namenode has reclaimed a
 * deleted layer it moves the layer's seal from {@code /fastblock/fences/{id}} into this set in one
 * transaction, so a deleted volume leaves no znode of its own behind while storage servers still
 * refuse every write to its ids, also after a restart. Ids come from one growing counter and
 * neighbours are often deleted too, so the ranges stay few: at most one more than the ids between
 * them still in use.
 */
public final class SealedIds {
    public static final SealedIds EMPTY = new SealedIds(new long[0], new long[0]);

    private final long[] from;
    private final long[] to; // inclusive

    private SealedIds(long[] from, long[] to) {
        this.from = from;
        this.to = to;
    }

    public boolean contains(long id) {
        int lo = 0;
        int hi = from.length - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (id < from[mid]) {
                hi = mid - 1;
            } else if (id > to[mid]) {
                lo = mid + 1;
            } else {
                return true;
            }
        }
        return false;
    }

    /** This set plus {@code id} (adjacent ranges merged). */
    public SealedIds with(long id) {
        if (id < 0) {
            throw new IllegalArgumentException("negative id " + id);
        }
        if (contains(id)) {
            return this;
        }
        List<long[]> ranges = new ArrayList<>(from.length + 1);
        boolean added = false;
        for (int i = 0; i < from.length; i++) {
            if (!added && id < from[i]) {
                ranges.add(new long[] {id, id});
                added = true;
            }
            ranges.add(new long[] {from[i], to[i]});
        }
        if (!added) {
            ranges.add(new long[] {id, id});
        }
        return of(ranges);
    }

    /** Number of ranges (the set's size on the wire grows with it, not with the ids). */
    public int ranges() {
        return from.length;
    }

    public byte[] encode() {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < from.length; i++) {
            if (i > 0) {
                sb.append(',');
            }
            sb.append(from[i]);
            if (to[i] != from[i]) {
                sb.append('-').append(to[i]);
            }
        }
        return sb.toString().getBytes(StandardCharsets.US_ASCII);
    }

    /** Parses {@link #encode}'s text; IllegalArgumentException naming the offending part otherwise. */
    public static SealedIds parse(byte[] data) {
        String text = data == null ? "" : new String(data, StandardCharsets.US_ASCII).trim();
        if (text.isEmpty()) {
            return EMPTY;
        }
        List<long[]> ranges = new ArrayList<>();
        for (String part : text.split(",")) {
            String[] ends = part.trim().split("-", -1);
            try {
                long a = Long.parseLong(ends[0]);
                long b = ends.length == 2 ? Long.parseLong(ends[1]) : a;
                if (ends.length > 2 || a < 0 || b < a) {
                    throw new NumberFormatException();
                }
                if (!ranges.isEmpty() && a <= ranges.get(ranges.size() - 1)[1]) {
                    throw new IllegalArgumentException("sealed ids \"" + part + "\" out of order in \"" + text + "\"");
                }
                ranges.add(new long[] {a, b});
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("sealed ids: \"" + part + "\" is not an id or a range a-b of ids");
            }
        }
        return of(ranges);
    }

    private static SealedIds of(List<long[]> sorted) {
        List<long[]> merged = new ArrayList<>();
        for (long[] r : sorted) {
            long[] last = merged.isEmpty() ? null : merged.get(merged.size() - 1);
            if (last != null && r[0] <= last[1] + 1) {
                last[1] = Math.max(last[1], r[1]);
            } else {
                merged.add(new long[] {r[0], r[1]});
            }
        }
        long[] f = new long[merged.size()];
        long[] t = new long[merged.size()];
        for (int i = 0; i < f.length; i++) {
            f[i] = merged.get(i)[0];
            t[i] = merged.get(i)[1];
        }
        return new SealedIds(f, t);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SealedIds s && java.util.Arrays.equals(from, s.from) && java.util.Arrays.equals(to, s.to);
    }

    @Override
    public int hashCode() {
        return java.util.Arrays.hashCode(from) * 31 + java.util.Arrays.hashCode(to);
    }

    @Override
    public String toString() {
        return new String(encode(), StandardCharsets.US_ASCII);
    }
}
