package io.fastblock.storage.log;

import io.fastblock.protocol.ChunkId;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * Layout of one log record:
 * <pre>
 * magic:int32  crc32c:int32  volumeId:int64  chunkIndex:int64  offset:int64  length:int32  sequence:int64
 *   [originSegment:int64 originPosition:int64]   (moved records only)
 *   data[length]
 * </pre>
 * Big-endian. The CRC32C covers every header byte after the crc field and the data, so a torn
 * or bit-flipped record is detected both on replay and on every read.
 *
 * <p>A <em>moved</em> record ({@link #MAGIC_MOVED}) is live data the cleaner copied out of the
 * record run starting at (originSegment, originPosition). It is applied to the index only where
 * the index still points at that origin, on the live path and on replay alike, so copying old
 * data can never shadow a newer write.
 */
public final class LogRecord {
    public static final int MAGIC = 0xFB10_6A11;
    public static final int MAGIC_MOVED = 0xFB10_6A12;
    /**
     * A trim: the ordinary header whose length is the range given back, and no data. Replayed as
     * a hole in the index, so neither older records nor the base file show through it.
     */
    public static final int MAGIC_TRIM = 0xFB10_6A13;
    /** Largest trim range a record may name (the largest chunk). */
    static final long MAX_TRIM = 1L << 30;
    public static final int HEADER = 4 + 4 + 8 + 8 + 8 + 4 + 8;
    public static final int HEADER_MOVED = HEADER + 16;
    /** Offset of the first byte covered by the CRC. */
    static final int CRC_FROM = 8;
    /** Bounds memory during replay: no single write is larger than a frame can carry. */
    public static final int MAX_DATA = io.fastblock.protocol.codec.StorageFrames.MAX_DATA;

    private LogRecord() {
    }

    /** A header whose crc field is computed over the header fields and {@code data} (not consumed). */
    public static ByteBuffer header(ChunkId chunk, long offset, long sequence, ByteBuffer[] data) {
        return header(chunk, offset, sequence, -1, -1, data);
    }

    /** As {@link #header(ChunkId, long, long, ByteBuffer[])}; a moved record when {@code originSegment >= 0}. */
    public static ByteBuffer header(ChunkId chunk, long offset, long sequence, long originSegment, long originPosition,
                                    ByteBuffer[] data) {
        return header(chunk, offset, sequence, originSegment, originPosition, data, -1);
    }

    /** The header of a trim record of {@code [offset, offset + length)} (no data follows it). */
    public static ByteBuffer trimHeader(ChunkId chunk, long offset, long sequence, int length) {
        return header(chunk, offset, sequence, -1, -1, new ByteBuffer[0], length);
    }

    private static ByteBuffer header(ChunkId chunk, long offset, long sequence, long originSegment, long originPosition,
                                     ByteBuffer[] data, int trimLength) {
        int length = 0;
        for (ByteBuffer b : data) {
            length += b.remaining();
        }
        boolean trim = trimLength >= 0;
        if (trim) {
            length = trimLength;
        }
        boolean moved = originSegment >= 0;
        ByteBuffer h = ByteBuffer.allocate(moved ? HEADER_MOVED : HEADER);
        h.putInt(moved ? MAGIC_MOVED : trim ? MAGIC_TRIM : MAGIC).putInt(0).putLong(chunk.volumeId()).putLong(chunk.index()).putLong(offset)
                .putInt(length).putLong(sequence);
        if (moved) {
            h.putLong(originSegment).putLong(originPosition);
        }
        CRC32C crc = new CRC32C();
        crc.update(h.array(), CRC_FROM, h.capacity() - CRC_FROM);
        for (ByteBuffer b : data) {
            crc.update(b.duplicate());
        }
        h.putInt(4, (int) crc.getValue());
        h.flip();
        return h;
    }

    /**
     * Parsed header fields of a record read back from a segment. {@code originSegment} is -1 for
     * an ordinary record, and also for a moved one whose origin was not in the parsed bytes.
     */
    public record Header(int crc, long volumeId, long chunkIndex, long offset, int length, long sequence,
                         boolean moved, long originSegment, long originPosition, boolean trim) {
        public Header(int crc, long volumeId, long chunkIndex, long offset, int length, long sequence,
                      boolean moved, long originSegment, long originPosition) {
            this(crc, volumeId, chunkIndex, offset, length, sequence, moved, originSegment, originPosition, false);
        }

        public ChunkId chunk() {
            return new ChunkId(volumeId, chunkIndex);
        }

        public int headerSize() {
            return moved ? HEADER_MOVED : HEADER;
        }

        /** Data bytes that follow the header (none for a trim, whose length is its range). */
        public int dataBytes() {
            return trim ? 0 : length;
        }

        /** Header plus data: where the next record starts. */
        public int size() {
            return headerSize() + dataBytes();
        }
    }

    /**
     * Parses a header at the buffer's position, or null if it is not a plausible record header.
     * {@link #HEADER} bytes suffice to learn the record's size; a moved record's origin is read
     * when the buffer holds {@link #HEADER_MOVED} bytes.
     */
    public static Header parse(ByteBuffer b) {
        int p = b.position();
        if (b.remaining() < HEADER) {
            return null;
        }
        int magic = b.getInt(p);
        if (magic != MAGIC && magic != MAGIC_MOVED && magic != MAGIC_TRIM) {
            return null;
        }
        boolean moved = magic == MAGIC_MOVED;
        boolean trim = magic == MAGIC_TRIM;
        long vol = b.getLong(p + 8);
        long idx = b.getLong(p + 16);
        long off = b.getLong(p + 24);
        int len = b.getInt(p + 32);
        if (vol < 0 || idx < 0 || off < 0 || len < 0 || len > (trim ? MAX_TRIM : MAX_DATA)) {
            return null;
        }
        long originSegment = -1;
        long originPosition = -1;
        if (moved && b.remaining() >= HEADER_MOVED) {
            originSegment = b.getLong(p + HEADER);
            originPosition = b.getLong(p + HEADER + 8);
        }
        return new Header(b.getInt(p + 4), vol, idx, off, len, b.getLong(p + 36), moved, originSegment, originPosition, trim);
    }

    /** True if {@code record} (header then data, from its position) matches its stored CRC. */
    public static boolean verify(ByteBuffer record, Header h) {
        int p = record.position();
        if (record.remaining() < h.size()) {
            return false;
        }
        CRC32C crc = new CRC32C();
        ByteBuffer covered = record.duplicate();
        covered.position(p + CRC_FROM).limit(p + h.size());
        crc.update(covered);
        return (int) crc.getValue() == h.crc();
    }
}
