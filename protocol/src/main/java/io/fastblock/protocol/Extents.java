package io.fastblock.protocol;

import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Allocated ranges of a chunk, ascending, disjoint and not touching (adjacent ranges are merged),
 * as answered by EXTENTS and by READ with {@link ReadRequest#FLAG_WITH_EXTENTS}.
 *
 * <pre>
 * extents = count:int32 (offset:int64 length:int32){count}
 * </pre>
 */
public final class Extents {
    public static final int RANGE_BYTES = 8 + 4;
    public static final Extents NONE = new Extents(List.of());

    /** {@code [offset, offset + length)}, length > 0. */
    public record Range(long offset, int length) {
        public Range {
            if (offset < 0 || length <= 0) {
                throw new IllegalArgumentException("bad extent [" + offset + ", +" + length + ")");
            }
        }

        public long end() {
            return offset + length;
        }
    }

    private final List<Range> ranges;

    private Extents(List<Range> ranges) {
        this.ranges = ranges;
    }

    /** Checks the ranges are ascending and neither overlap nor touch. */
    public static Extents of(List<Range> ranges) {
        List<Range> copy = List.copyOf(ranges);
        for (int i = 1; i < copy.size(); i++) {
            if (copy.get(i).offset() <= copy.get(i - 1).end()) {
                throw new IllegalArgumentException("extent " + copy.get(i) + " does not start after " + copy.get(i - 1));
            }
        }
        return new Extents(copy);
    }

    public List<Range> ranges() {
        return ranges;
    }

    public int count() {
        return ranges.size();
    }

    public boolean isEmpty() {
        return ranges.isEmpty();
    }

    /** Total bytes covered. */
    public long allocatedBytes() {
        long sum = 0;
        for (Range r : ranges) {
            sum += r.length();
        }
        return sum;
    }

    /** True when byte {@code position} lies in an extent. */
    public boolean contains(long position) {
        int lo = 0;
        int hi = ranges.size() - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            Range r = ranges.get(mid);
            if (position < r.offset()) {
                hi = mid - 1;
            } else if (position >= r.end()) {
                lo = mid + 1;
            } else {
                return true;
            }
        }
        return false;
    }

    public int encodedSize() {
        return 4 + ranges.size() * RANGE_BYTES;
    }

    public void encode(ByteBuf out) {
        out.writeInt(ranges.size());
        for (Range r : ranges) {
            out.writeLong(r.offset());
            out.writeInt(r.length());
        }
    }

    /**
     * Reads an extent list from {@code in}, advancing its reader index past it (data after the list,
     * as in a READ with extents, stays readable). Malformed lists throw {@link ProtocolException}.
     */
    public static Extents decode(ByteBuf in) {
        if (in.readableBytes() < 4) {
            throw new ProtocolException("extent list of " + in.readableBytes() + " bytes has no count");
        }
        int count = in.readInt();
        if (count < 0 || (long) count * RANGE_BYTES > in.readableBytes()) {
            throw new ProtocolException("extent list says " + count + " ranges but only " + in.readableBytes()
                    + " bytes follow");
        }
        List<Range> ranges = new ArrayList<>(count);
        try {
            for (int i = 0; i < count; i++) {
                ranges.add(new Range(in.readLong(), in.readInt()));
            }
            return of(ranges);
        } catch (IllegalArgumentException e) {
            throw new ProtocolException("bad extent list: " + e.getMessage());
        }
    }

    /** Collects ranges in ascending order, merging overlapping and adjacent ones. */
    public static final class Builder {
        private final List<Range> ranges = new ArrayList<>();

        public Builder add(long offset, long length) {
            if (length <= 0) {
                return this;
            }
            if (!ranges.isEmpty()) {
                Range last = ranges.get(ranges.size() - 1);
                if (offset < last.offset()) {
                    throw new IllegalArgumentException("range at " + offset + " added after one at " + last.offset());
                }
                if (offset <= last.end()) {
                    long end = Math.max(last.end(), offset + length);
                    ranges.set(ranges.size() - 1, new Range(last.offset(), Math.toIntExact(end - last.offset())));
                    return this;
                }
            }
            ranges.add(new Range(offset, Math.toIntExact(length)));
            return this;
        }

        public Extents build() {
            return new Extents(Collections.unmodifiableList(new ArrayList<>(ranges)));
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Extents e && e.ranges.equals(ranges);
    }

    @Override
    public int hashCode() {
        return ranges.hashCode();
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("Extents[");
        for (Range r : ranges) {
            sb.append('[').append(r.offset()).append(',').append(r.end()).append(')');
        }
        return sb.append(']').toString();
    }
}
