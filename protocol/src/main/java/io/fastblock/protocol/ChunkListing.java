package io.fastblock.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.ArrayList;
import java.util.List;

/**
 * The answer data of {@link ChunkListRequest}: the chunks a tail holds for a group and the length
 * of each (bytes up to the end of its last written byte).
 *
 * <pre>
 * listing = count:int32 (volumeId:int64 chunkIndex:int64 length:int64){count}
 * </pre>
 */
public record ChunkListing(List<Entry> entries) {
    public static final int ENTRY_BYTES = 8 + 8 + 8;
    /** The most entries one response may carry (the frame's data limit). */
    public static final int MAX_ENTRIES = (io.fastblock.protocol.codec.StorageFrames.MAX_DATA - 4) / ENTRY_BYTES;

    public record Entry(ChunkId chunk, long length) {
        public Entry {
            if (length < 0) {
                throw new IllegalArgumentException("negative length " + length + " of chunk " + chunk);
            }
        }
    }

    public ChunkListing {
        entries = List.copyOf(entries);
        if (entries.size() > MAX_ENTRIES) {
            throw new IllegalArgumentException(entries.size() + " chunks do not fit one listing (at most " + MAX_ENTRIES + ")");
        }
    }

    public ByteBuf encode(ByteBufAllocator alloc) {
        ByteBuf out = alloc.buffer(4 + entries.size() * ENTRY_BYTES);
        out.writeInt(entries.size());
        for (Entry e : entries) {
            out.writeLong(e.chunk().volumeId());
            out.writeLong(e.chunk().index());
            out.writeLong(e.length());
        }
        return out;
    }

    /** Decodes a listing from {@code data} (not released). */
    public static ChunkListing decode(ByteBuf data) {
        ByteBuf in = data.duplicate();
        if (in.readableBytes() < 4) {
            throw new ProtocolException("chunk listing of " + in.readableBytes() + " bytes has no count");
        }
        int count = in.readInt();
        if (count < 0 || (long) count * ENTRY_BYTES != in.readableBytes()) {
            throw new ProtocolException("chunk listing says " + count + " entries but " + in.readableBytes()
                    + " bytes follow");
        }
        List<Entry> entries = new ArrayList<>(count);
        try {
            for (int i = 0; i < count; i++) {
                entries.add(new Entry(new ChunkId(in.readLong(), in.readLong()), in.readLong()));
            }
        } catch (IllegalArgumentException e) {
            throw new ProtocolException("bad chunk listing entry: " + e.getMessage());
        }
        return new ChunkListing(entries);
    }
}
