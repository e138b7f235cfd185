package io.fastblock.storage.log;

/**
 * A run of chunk bytes {@code [chunkOffset, chunkOffset + length)} whose data sits in the record
 * at {@code recordPosition} of segment {@code segment}, starting {@code dataOffset} bytes into
 * the record's data. A trimmed extent keeps pointing into its whole record, so reads can still
 * verify the record's CRC.
 */
public record Extent(long chunkOffset, long segment, long recordPosition, int dataOffset, int length, long sequence) {
    public long end() {
        return chunkOffset + length;
    }
}
