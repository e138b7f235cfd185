package io.fastblock.storage.log;

import io.fastblock.protocol.ChunkId;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * Layout of one log record:
 * <pre>
 * magic:int32  crc32c:int32  volumeId:int64  chunkIndex:int64  offset:int64  length:int32  sequence:int64  data[length]
 * </pre>
 * Big-endian. The CRC32C covers every header byte after the crc field and the data, so a torn
 * or bit-flipped record is detected both on replay and on every read.
 */
public final class LogRecord {
    public static final int MAGIC = 0xFB10_6A11;
    public static final int HEADER = 4 + 4 + 8 + 8 + 8 + 4 + 8;
    /** Offset of the first byte covered by the CRC. */
    static final int CRC_FROM = 8;
    /** Bounds memory during replay: no single write is larger than a frame can carry. */
    public static final int MAX_DATA = io.fastblock.protocol.codec.StorageFrames.MAX_DATA;

    private LogRecord() {
    }

    /** A header whose crc field is computed over the header fields and {@code data} (not consumed). */
    public static ByteBuffer header(ChunkId chunk, long offset, long sequence, ByteBuffer[] data) {
        int length = 0;
        for (ByteBuffer b : data) {
            length += b.remaining();
        }
        ByteBuffer h = ByteBuffer.allocate(HEADER);
        h.putInt(MAGIC).putInt(0).putLong(chunk.volumeId()).putLong(chunk.index()).putLong(offset)
                .putInt(length).putLong(sequence);
        CRC32C crc = new CRC32C();
        crc.update(h.array(), CRC_FROM, HEADER - CRC_FROM);
        for (ByteBuffer b : data) {
            crc.update(b.duplicate());
        }
        h.putInt(4, (int) crc.getValue());
        h.flip();
        return h;
    }

    /** Parsed header fields of a record read back from a segment. */
    public record Header(int crc, long volumeId, long chunkIndex, long offset, int length, long sequence) {
        public ChunkId chunk() {
            return new ChunkId(volumeId, chunkIndex);
        }
    }

    /** Parses a header at the buffer's position, or null if it is not a plausible record header. */
    public static Header parse(ByteBuffer b) {
        int p = b.position();
        if (b.remaining() < HEADER || b.getInt(p) != MAGIC) {
            return null;
        }
        long vol = b.getLong(p + 8);
        long idx = b.getLong(p + 16);
        long off = b.getLong(p + 24);
        int len = b.getInt(p + 32);
        if (vol < 0 || idx < 0 || off < 0 || len < 0 || len > MAX_DATA) {
            return null;
        }
        return new Header(b.getInt(p + 4), vol, idx, off, len, b.getLong(p + 36));
    }

    /** True if {@code record} (header then data, from its position) matches its stored CRC. */
    public static boolean verify(ByteBuffer record, Header h) {
        int p = record.position();
        CRC32C crc = new CRC32C();
        ByteBuffer covered = record.duplicate();
        covered.position(p + CRC_FROM).limit(p + HEADER + h.length());
        crc.update(covered);
        return (int) crc.getValue() == h.crc();
    }
}
