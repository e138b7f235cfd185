package io.fastblock.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.ArrayList;
import java.util.List;

/**
 * The answer to {@link ChangesRequest}: whether the tail can tell ({@code complete}: its log
 * holds every change above the asked sequence; if not, the asker copies the whole chunk), and the
 * changed ranges in offset order, each either data ({@code hole} false: copy it) or trimmed
 * ({@code hole} true: it reads as zeros and is unallocated at the tail).
 *
 * <pre>complete:uint8 count:int32 (offset:int64 length:int32 hole:uint8){count}</pre>
 */
public record ChunkChanges(boolean complete, List<Range> ranges) {
    public record Range(long offset, int length, boolean hole) {
        public Range {
            if (offset < 0 || length <= 0) {
                throw new IllegalArgumentException("bad changed range " + offset + "+" + length);
            }
        }
    }

    public static final ChunkChanges UNKNOWN = new ChunkChanges(false, List.of());

    public ChunkChanges {
        ranges = List.copyOf(ranges);
    }

    public long dataBytes() {
        long n = 0;
        for (Range r : ranges) {
            if (!r.hole()) {
                n += r.length();
            }
        }
        return n;
    }

    public ByteBuf encode(ByteBufAllocator alloc) {
        ByteBuf out = alloc.buffer(5 + ranges.size() * 13);
        out.writeByte(complete ? 1 : 0);
        out.writeInt(ranges.size());
        for (Range r : ranges) {
            out.writeLong(r.offset()).writeInt(r.length()).writeByte(r.hole() ? 1 : 0);
        }
        return out;
    }

    public static ChunkChanges decode(ByteBuf in) {
        if (in.readableBytes() < 5) {
            throw new ProtocolException("changes answer of " + in.readableBytes() + " bytes");
        }
        boolean complete = in.readByte() != 0;
        int count = in.readInt();
        if (count < 0 || in.readableBytes() != (long) count * 13) {
            throw new ProtocolException("changes answer says " + count + " ranges but has " + in.readableBytes() + " bytes");
        }
        List<Range> ranges = new ArrayList<>(count);
        try {
            for (int i = 0; i < count; i++) {
                ranges.add(new Range(in.readLong(), in.readInt(), in.readByte() != 0));
            }
        } catch (IllegalArgumentException e) {
            throw new ProtocolException(e.getMessage());
        }
        return new ChunkChanges(complete, ranges);
    }
}
