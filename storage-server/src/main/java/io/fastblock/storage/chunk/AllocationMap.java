package io.fastblock.storage.chunk;

import io.fastblock.protocol.Extents;
import io.fastblock.storage.io.FileIo;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Which 4 KiB blocks of a chunk are allocated (written and not trimmed since): one bit per block
 * in {@code <chunk>.map}, block {@code b} at bit {@code b % 8} of byte {@code b / 8}; bytes past
 * the end of the file are 0 (unallocated). A chunk file's checksums cannot tell a written zero
 * block from a hole, this can.
 *
 * <p>Crash rules (kept by {@link ChunkFile}): a write sets its bits before its data is written and
 * a trim clears them after its zeros are, so a crash in between over-reports only the block of a
 * request that was never acknowledged. Like the data and the checksums the map is forced at a
 * checkpoint, not per write: after a power loss a dirty chunk resyncs from the tail, map included.
 *
 * <p>Not thread-safe: used on the chunk's stripe only.
 */
final class AllocationMap implements Closeable {
    private final FileIo file;

    AllocationMap(FileIo file) {
        this.file = file;
    }

    /** Sets ({@code allocated}) or clears the bits of blocks {@code [first, first + count)}. */
    void set(long first, long count, boolean allocated) throws IOException {
        if (count <= 0) {
            return;
        }
        long end = first + count;
        long fromByte = first / 8;
        long toByte = (end - 1) / 8;
        long size = file.size();
        if (!allocated && fromByte >= size) {
            return; // already clear: never grow the file to clear bits
        }
        int n = (int) (toByte - fromByte + 1);
        ByteBuffer b = ByteBuffer.allocate(n);
        file.readFully(b, fromByte);
        b.clear();
        boolean changed = false;
        for (long blk = first; blk < end; blk++) {
            int i = (int) (blk / 8 - fromByte);
            int bit = 1 << (int) (blk % 8);
            byte was = b.get(i);
            byte now = (byte) (allocated ? was | bit : was & ~bit);
            changed |= now != was;
            b.put(i, now);
        }
        if (!changed && toByte < size) {
            // Every bit already as asked (an overwrite of allocated blocks, the common case): no write.
            return;
        }
        if (!allocated && toByte >= size) {
            // Clearing up to or beyond the end: writing the clear bytes past the end would only grow the file.
            b.limit((int) (size - fromByte));
        }
        file.writeFully(b, fromByte);
    }

    /** The allocated byte ranges within {@code [offset, offset + length)}, block-granular, clipped to the range. */
    Extents extents(long offset, long length, int blockSize) throws IOException {
        Extents.Builder out = new Extents.Builder();
        if (length <= 0) {
            return out.build();
        }
        long end = offset + length;
        long first = offset / blockSize;
        long last = (end - 1) / blockSize;
        long fromByte = first / 8;
        long size = file.size();
        if (fromByte >= size) {
            return out.build();
        }
        int n = (int) Math.min(last / 8 - fromByte + 1, size - fromByte);
        ByteBuffer b = ByteBuffer.allocate(n);
        file.readFully(b, fromByte);
        for (long blk = first; blk <= last; blk++) {
            int i = (int) (blk / 8 - fromByte);
            if (i >= n) {
                break;
            }
            if ((b.get(i) & (1 << (int) (blk % 8))) != 0) {
                long a = Math.max(offset, blk * blockSize);
                long z = Math.min(end, (blk + 1) * blockSize);
                out.add(a, z - a);
            }
        }
        return out.build();
    }

    /** Drops the bits of blocks at or after {@code blocks} (the data file was cut there). */
    void truncate(long blocks) throws IOException {
        long keepBytes = (blocks + 7) / 8;
        if (file.size() > keepBytes) {
            file.truncate(keepBytes);
        }
        if (blocks % 8 != 0 && file.size() == keepBytes && keepBytes > 0) {
            set(blocks, 8 - blocks % 8, false);
        }
    }

    long fileSize() throws IOException {
        return file.size();
    }

    void force() throws IOException {
        file.force(false);
    }

    @Override
    public void close() throws IOException {
        file.close();
    }
}
