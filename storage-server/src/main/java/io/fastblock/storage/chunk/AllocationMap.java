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
 * <p>The file's bytes are also kept in memory (read once at open; 2 KiB for a 64 MiB chunk), and
 * every change is written through to the file before {@link #set} returns: so an overwrite of
 * allocated blocks, the common write, costs no system call at all (it used to cost an fstat and
 * a pread per write and replica), and {@link #extents} reads no file. This object is the file's
 * only writer while it is open.
 *
 * <p>Crash rules (kept by {@link ChunkFile}): a write sets its bits before its data is written and
 * a trim clears them after its zeros are, so a crash in between over-reports only the block of a
 * request that was never acknowledged. Like the data and the checksums the map is forced at a
 * checkpoint, not per write: after a power loss a dirty chunk resyncs from the tail, map included.
 * The memory copy changes only after the file write succeeded, so a failed write is retried by the
 * next {@link #set} of the same bits.
 *
 * <p>Not thread-safe: used on the chunk's stripe only.
 */
final class AllocationMap implements Closeable {
    private final FileIo file;
    /** The file's bytes: {@code bits[0, size)}; the array may be longer (spare room for growth). */
    private byte[] bits;
    private int size;

    AllocationMap(FileIo file) throws IOException {
        this.file = file;
        long len = file.size();
        if (len > Integer.MAX_VALUE - 8) {
            throw new IOException("allocation map " + file.path() + " is " + len + " bytes, more than any chunk needs");
        }
        this.size = (int) len;
        this.bits = new byte[size];
        ByteBuffer b = ByteBuffer.wrap(bits);
        if (!file.readFully(b, 0)) {
            throw new IOException("allocation map " + file.path() + " shrank while it was read");
        }
    }

    private boolean bit(long blk) {
        long i = blk / 8;
        return i < size && (bits[(int) i] & (1 << (int) (blk % 8))) != 0;
    }

    /** Sets ({@code allocated}) or clears the bits of blocks {@code [first, first + count)}. */
    void set(long first, long count, boolean allocated) throws IOException {
        if (count <= 0) {
            return;
        }
        long end = first + count;
        long fromByte = first / 8;
        long toByte = (end - 1) / 8;
        if (!allocated && fromByte >= size) {
            return; // already clear: never grow the file to clear bits
        }
        if (toByte >= Integer.MAX_VALUE - 8) {
            throw new IOException("block " + (end - 1) + " is beyond any chunk's allocation map");
        }
        int n = (int) (toByte - fromByte + 1);
        byte[] now = new byte[n];
        if (fromByte < size) {
            System.arraycopy(bits, (int) fromByte, now, 0, (int) Math.min(n, size - fromByte));
        }
        boolean changed = false;
        for (long blk = first; blk < end; blk++) {
            int i = (int) (blk / 8 - fromByte);
            int bit = 1 << (int) (blk % 8);
            byte was = now[i];
            byte b = (byte) (allocated ? was | bit : was & ~bit);
            changed |= b != was;
            now[i] = b;
        }
        if (!changed && toByte < size) {
            // Every bit already as asked (an overwrite of allocated blocks, the common case): no write.
            return;
        }
        int len = n;
        if (!allocated && toByte >= size) {
            // Clearing up to or beyond the end: writing the clear bytes past the end would only grow the file.
            len = (int) (size - fromByte);
        }
        file.writeFully(ByteBuffer.wrap(now, 0, len), fromByte);
        int newSize = (int) Math.max(size, fromByte + len);
        if (newSize > bits.length) {
            bits = java.util.Arrays.copyOf(bits, Math.max(newSize, Math.min(bits.length * 2, Integer.MAX_VALUE - 8)));
        }
        System.arraycopy(now, 0, bits, (int) fromByte, len);
        size = newSize;
    }

    /**
     * The allocated byte ranges within {@code [offset, offset + length)}, block-granular, clipped to
     * the range. Walks runs, whole bytes of the map at a time where they are all set or all clear:
     * block by block, a 64 MiB chunk was 16,384 steps and as many range objects, and qemu asks
     * GET LBA STATUS of four chunks 32 times at once before its first reads of each region.
     */
    Extents extents(long offset, long length, int blockSize) {
        Extents.Builder out = new Extents.Builder();
        if (length <= 0) {
            return out.build();
        }
        long end = offset + length;
        long last = Math.min((end - 1) / blockSize, (long) size * 8 - 1);
        long blk = next(offset / blockSize, last, true);
        while (blk <= last) {
            long runEnd = next(blk, last, false);
            long a = Math.max(offset, blk * blockSize);
            long z = Math.min(end, runEnd * blockSize);
            out.add(a, z - a);
            blk = next(runEnd, last, true);
        }
        return out.build();
    }

    /** The first block in {@code [blk, last]} whose bit is {@code set}, or {@code last + 1}. */
    private long next(long blk, long last, boolean set) {
        byte other = set ? (byte) 0 : (byte) 0xff; // a byte holding only blocks of the other kind
        while (blk <= last) {
            if (blk % 8 == 0 && blk + 7 <= last && bits[(int) (blk / 8)] == other) {
                blk += 8;
            } else if (bit(blk) == set) {
                return blk;
            } else {
                blk++;
            }
        }
        return last + 1;
    }

    /** Drops the bits of blocks at or after {@code blocks} (the data file was cut there). */
    void truncate(long blocks) throws IOException {
        long keepBytes = (blocks + 7) / 8;
        if (size > keepBytes) {
            file.truncate(keepBytes);
            java.util.Arrays.fill(bits, (int) keepBytes, size, (byte) 0);
            size = (int) keepBytes;
        }
        if (blocks % 8 != 0 && size == keepBytes && keepBytes > 0) {
            set(blocks, 8 - blocks % 8, false);
        }
    }

    long fileSize() {
        return size;
    }

    void force() throws IOException {
        file.force(false);
    }

    @Override
    public void close() throws IOException {
        file.close();
    }
}
