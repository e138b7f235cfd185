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
 * <p>A record is <em>bound</em> to the segment it is written in: its CRC32C starts from that
 * segment's number (eight big-endian bytes, not stored), and its magic says so. The log reuses
 * the files of segments it has emptied ({@link SegmentSet}), so past a segment's last record the
 * file may still hold whole, well-formed records from its earlier life; bound to another number,
 * they fail the check and replay ends there, as it does at a torn record. Records written before
 * binding (the {@code UNBOUND} magics) stay readable; a file holding them is never reused.
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
    /** The bound forms of {@link #MAGIC}, {@link #MAGIC_MOVED} and {@link #MAGIC_TRIM}: what the log writes now. */
    public static final int MAGIC_BOUND = 0xFB10_6A21;
    public static final int MAGIC_MOVED_BOUND = 0xFB10_6A22;
    public static final int MAGIC_TRIM_BOUND = 0xFB10_6A23;
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

    /** A header bound to {@code segment} whose crc field is computed over the header fields and {@code data} (not consumed). */
    public static ByteBuffer header(long segment, ChunkId chunk, long offset, long sequence, ByteBuffer[] data) {
        return header(segment, chunk, offset, sequence, -1, -1, data);
    }

    /** As {@link #header(long, ChunkId, long, long, ByteBuffer[])}; a moved record when {@code originSegment >= 0}. */
    public static ByteBuffer header(long segment, ChunkId chunk, long offset, long sequence, long originSegment,
                                    long originPosition, ByteBuffer[] data) {
        return header(segment, chunk, offset, sequence, originSegment, originPosition, data, -1);
    }

    /** The header of a trim record of {@code [offset, offset + length)} bound to {@code segment} (no data follows it). */
    public static ByteBuffer trimHeader(long segment, ChunkId chunk, long offset, long sequence, int length) {
        return header(segment, chunk, offset, sequence, -1, -1, new ByteBuffer[0], length);
    }

    /** The header size of a record, moved or not: known before the segment it goes to is. */
    static int headerSize(boolean moved) {
        return moved ? HEADER_MOVED : HEADER;
    }

    /**
     * A header as the log wrote it before records were bound to their segment. Only for tests of
     * logs written by earlier versions, which must stay readable.
     */
    static ByteBuffer unboundHeader(ChunkId chunk, long offset, long sequence, long originSegment, long originPosition,
                                    ByteBuffer[] data) {
        return header(UNBOUND, chunk, offset, sequence, originSegment, originPosition, data, -1);
    }

    /** Stands for "no segment": the record is written unbound. Segment numbers start at 1. */
    private static final long UNBOUND = -1;

    private static ByteBuffer header(long segment, ChunkId chunk, long offset, long sequence, long originSegment,
                                     long originPosition, ByteBuffer[] data, int trimLength) {
        int length = 0;
        for (ByteBuffer b : data) {
            length += b.remaining();
        }
        boolean trim = trimLength >= 0;
        if (trim) {
            length = trimLength;
        }
        boolean moved = originSegment >= 0;
        boolean bound = segment != UNBOUND;
        int magic = moved ? MAGIC_MOVED : trim ? MAGIC_TRIM : MAGIC;
        ByteBuffer h = ByteBuffer.allocate(headerSize(moved));
        h.putInt(bound ? bind(magic) : magic).putInt(0).putLong(chunk.volumeId()).putLong(chunk.index()).putLong(offset)
                .putInt(length).putLong(sequence);
        if (moved) {
            h.putLong(originSegment).putLong(originPosition);
        }
        CRC32C crc = start(bound, segment);
        crc.update(h.array(), CRC_FROM, h.capacity() - CRC_FROM);
        for (ByteBuffer b : data) {
            crc.update(b.duplicate());
        }
        h.putInt(4, (int) crc.getValue());
        h.flip();
        return h;
    }

    private static int bind(int magic) {
        return magic + (MAGIC_BOUND - MAGIC);
    }

    /** A CRC32C that has taken in the segment number when the record is bound. */
    private static CRC32C start(boolean bound, long segment) {
        CRC32C crc = new CRC32C();
        if (bound) {
            byte[] n = new byte[8];
            for (int i = 0; i < 8; i++) {
                n[i] = (byte) (segment >>> (56 - 8 * i));
            }
            crc.update(n);
        }
        return crc;
    }

    /**
     * Parsed header fields of a record read back from a segment. {@code originSegment} is -1 for
     * an ordinary record, and also for a moved one whose origin was not in the parsed bytes.
     */
    public record Header(int crc, long volumeId, long chunkIndex, long offset, int length, long sequence,
                         boolean moved, long originSegment, long originPosition, boolean trim, boolean bound) {

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
        boolean bound = magic == MAGIC_BOUND || magic == MAGIC_MOVED_BOUND || magic == MAGIC_TRIM_BOUND;
        if (bound) {
            magic -= MAGIC_BOUND - MAGIC;
        } else if (magic != MAGIC && magic != MAGIC_MOVED && magic != MAGIC_TRIM) {
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
        return new Header(b.getInt(p + 4), vol, idx, off, len, b.getLong(p + 36), moved, originSegment, originPosition, trim,
                bound);
    }

    /**
     * True if {@code record} (header then data, from its position), read from segment {@code segment},
     * matches its stored CRC: a bound record only in the segment it was written in.
     */
    public static boolean verify(ByteBuffer record, Header h, long segment) {
        int p = record.position();
        if (record.remaining() < h.size()) {
            return false;
        }
        CRC32C crc = start(h.bound(), segment);
        ByteBuffer covered = record.duplicate();
        covered.position(p + CRC_FROM).limit(p + h.size());
        crc.update(covered);
        return (int) crc.getValue() == h.crc();
    }
}
