package io.fastblock.storage.log;

/**
 * A run of chunk bytes {@code [chunkOffset, chunkOffset + length)} whose data sits in a run of
 * consecutive records of one chunk in segment {@code segment}, starting at {@code recordPosition}:
 * chunk byte {@code chunkOffset} is byte {@code dataOffset} of the run's concatenated data.
 * {@code runBytes} is the file span of the run (headers included) and {@code runData} its data
 * bytes; a run of one record is the common case, sequential appends grow a run (see
 * {@link ExtentIndex}). A trimmed extent keeps pointing into its whole run, so reads can still
 * verify every record's CRC. {@code runBytes == 0} marks an extent written before runs existed:
 * a single record that is never merged.
 */
public record Extent(long chunkOffset, long segment, long recordPosition, int dataOffset, int length, long sequence,
                     int runBytes, int runData) {
    public long end() {
        return chunkOffset + length;
    }

    /**
     * A hole left by a trim record at (trimSegment, position): the bytes read as zeros, neither
     * older records nor the base file show through. Encoded as segment {@code -2 - trimSegment} (-1 means "any run" to the index).
     */
    public boolean isHole() {
        return segment < 0;
    }

    static long holeSegment(long trimSegment) {
        return -2 - trimSegment;
    }

    /** True if this extent reads from the run at (segment, position). */
    boolean in(long seg, long position) {
        return segment == seg && recordPosition == position;
    }
}
