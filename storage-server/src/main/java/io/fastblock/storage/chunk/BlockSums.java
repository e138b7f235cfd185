package io.fastblock.storage.chunk;

import io.fastblock.storage.io.FileIo;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * A chunk's checksum sidecar {@code <chunk>.crc}: a CRC32C per 4 KiB block, 4 bytes each at
 * {@code 4 * block}, big-endian; entries past the end of the file read as 0 ("never written").
 *
 * <p>While the chunk is being written its entries are held in memory and reach the file only when
 * the chunk is forced (a checkpoint) or closed, so a 4 KiB write at head and middle costs one
 * system call, its data, instead of two (the sidecar's {@code pwrite} was ~3 µs of kernel CPU per
 * write and replica). The file never had to be current between checkpoints: after any unclean
 * shutdown, process crash or power loss, {@link ChunkStore} rebuilds the sidecar of every chunk
 * written since its last checkpoint before trusting it. A chunk that is only read holds no
 * memory: {@link #release} drops the copy when a checkpoint finds the chunk clean, and its entries
 * are read from the file again. So the memory held is 4 bytes per 4 KiB block of the chunks being
 * written (64 KiB for a whole 64 MiB chunk), and {@link SumMemory} bounds it: a chunk that finds
 * no room writes its entries through to the file, as every chunk did before.
 *
 * <p>A read ({@link #getForRead}) also holds the whole sidecar, if reads may take the room
 * ({@link SumMemory#takeForReads}: half of it, so writers keep the other half), and a checkpoint
 * lets it go once a whole interval passed without a read ({@link #releaseIfUnread}). Why: every
 * read checks its blocks, and a chunk only read paid a 4-byte {@code pread} of its sidecar per
 * read, a system call in each QD1 read's round trip, for 64 KiB read once per chunk.
 *
 * <p>Thread-safe, one lock: the chunk's stripe reads and writes entries while a checkpoint
 * forces them from its own thread. The file write runs under the lock, so an older copy of an
 * entry never lands after a newer one.
 */
final class BlockSums implements Closeable {
    /** Entries a chunk may have (a 2^31-block chunk is 8 TiB; far beyond any configured size). */
    private static final long MAX_ENTRIES = Integer.MAX_VALUE - 8;

    /** Entries of up to 64 blocks per thread, so a read of a chunk not being written allocates no buffer for them. */
    private static final ThreadLocal<ByteBuffer> READ = ThreadLocal.withInitial(() -> ByteBuffer.allocate(64 * 4));

    private final FileIo file;
    private final SumMemory room;
    /** Every entry, the file's and those not written back yet; null while none is held. */
    private int[] memory;
    /** Whether a read came since the last {@link #releaseIfUnread}. */
    private boolean readSinceSweep;
    /** Entries that exist while {@code memory} is held: the file's, extended by later writes. */
    private long entries;
    /** Entries {@code [dirtyFrom, dirtyTo)} may differ from the file. */
    private long dirtyFrom = Long.MAX_VALUE;
    private long dirtyTo;

    BlockSums(FileIo file, SumMemory room) {
        this.file = file;
        this.room = room;
    }

    /**
     * As {@link #get}, for a read of the chunk's data: holds every entry in memory for the reads
     * after it when there is room. Tried by the first read of an interval only, so a chunk refused
     * room does not pay a size lookup on every read until the next {@link #releaseIfUnread}.
     */
    synchronized int[] getForRead(long first, int count) throws IOException {
        if (memory == null && !readSinceSweep) {
            holdForReads();
        }
        readSinceSweep = true;
        return get(first, count);
    }

    /**
     * Drops a copy that no read asked for since the last call and that holds nothing to write back
     * (a checkpoint calls it for chunks not being written); true if it did.
     */
    synchronized boolean releaseIfUnread() throws IOException {
        boolean read = readSinceSweep;
        readSinceSweep = false;
        if (memory == null || read || dirtyTo > dirtyFrom) {
            return false;
        }
        release();
        return true;
    }

    /** The entries of blocks {@code [first, first + count)}; 0 where none was ever written. */
    synchronized int[] get(long first, int count) throws IOException {
        int[] out = new int[count];
        if (memory != null) {
            for (int i = 0; i < count; i++) {
                long b = first + i;
                out[i] = b < entries ? memory[(int) b] : 0;
            }
            return out;
        }
        ByteBuffer b = readBuffer(count * 4);
        file.readFully(b, first * 4); // what lies past the end stays 0
        for (int i = 0; i < count; i++) {
            out[i] = b.getInt(i * 4);
        }
        return out;
    }

    /** Sets the entries of blocks {@code [first, first + values.length)}, leaving those marked in {@code skip} as they are. */
    synchronized void put(long first, int[] values, boolean[] skip) throws IOException {
        long end = first + values.length;
        if (first < 0 || end > MAX_ENTRIES) {
            throw new IOException("checksum entries " + first + ".." + end + " are beyond any chunk");
        }
        if (!load(end)) {
            writeThrough(first, values, skip);
            return;
        }
        for (int i = 0; i < values.length; i++) {
            if (skip != null && skip[i]) {
                continue;
            }
            long b = first + i;
            memory[(int) b] = values[i];
            entries = Math.max(entries, b + 1);
            dirtyFrom = Math.min(dirtyFrom, b);
            dirtyTo = Math.max(dirtyTo, b + 1);
        }
    }

    /** Sets the entries of blocks {@code [from, to)} that exist to 0 (the blocks now read as zeros). */
    synchronized void zero(long from, long to) throws IOException {
        long end = Math.min(to, entries());
        if (end <= from) {
            return;
        }
        if (!load(end)) {
            file.zeroRange(from * 4, (end - from) * 4);
            return;
        }
        Arrays.fill(memory, (int) from, (int) end, 0);
        dirtyFrom = Math.min(dirtyFrom, from);
        dirtyTo = Math.max(dirtyTo, end);
    }

    /** Drops the entries of blocks at and after {@code blocks} (the data file was cut there). */
    synchronized void truncate(long blocks) throws IOException {
        if (memory != null && entries > blocks) {
            Arrays.fill(memory, (int) blocks, (int) entries, 0);
            entries = blocks;
            dirtyTo = Math.min(dirtyTo, blocks);
            if (dirtyTo <= dirtyFrom) {
                clean();
            }
        }
        if (file.size() > blocks * 4) {
            file.truncate(blocks * 4);
        }
    }

    /** Number of entries, written back or not. */
    synchronized long entries() throws IOException {
        return memory != null ? entries : (file.size() + 3) / 4;
    }

    /** Writes the changed entries to the file (not forced). On failure they stay pending for the next call. */
    synchronized void writeBack() throws IOException {
        if (dirtyTo <= dirtyFrom) {
            return;
        }
        int from = (int) dirtyFrom;
        int to = (int) dirtyTo;
        ByteBuffer b = ByteBuffer.allocate((to - from) * 4);
        for (int i = from; i < to; i++) {
            b.putInt(memory[i]);
        }
        b.flip();
        file.writeFully(b, from * 4L);
        clean();
    }

    /** Writes the changed entries back and forces the file: after this it holds every entry durably. */
    synchronized void force() throws IOException {
        writeBack();
        file.force(false);
    }

    /** Writes the changed entries back and drops the memory copy (the chunk is no longer being written). */
    synchronized void release() throws IOException {
        writeBack();
        if (memory != null) {
            room.give(memory.length * 4L);
        }
        memory = null;
        entries = 0;
    }

    /** Whether entries are held in memory (tests). */
    synchronized boolean held() {
        return memory != null;
    }

    @Override
    public synchronized void close() throws IOException {
        try {
            release();
        } finally {
            file.close();
        }
    }

    /** A zeroed buffer of {@code bytes} for reading entries from the file. */
    private static ByteBuffer readBuffer(int bytes) {
        ByteBuffer b = READ.get();
        if (b.capacity() < bytes) {
            b = ByteBuffer.allocate(bytes);
            READ.set(b);
        }
        Arrays.fill(b.array(), 0, bytes, (byte) 0);
        return b.clear().limit(bytes);
    }

    private void clean() {
        dirtyFrom = Long.MAX_VALUE;
        dirtyTo = 0;
    }

    /**
     * Holds the entries in memory with room for {@code needed} of them, reading the file if they
     * are not held yet; false if {@link SumMemory} has no room (then nothing is held).
     */
    private boolean load(long needed) throws IOException {
        if (memory == null) {
            long size = file.size();
            long n = (size + 3) / 4;
            if (n > MAX_ENTRIES) {
                throw new IOException("checksum file " + file.path() + " is " + size + " bytes, more than any chunk needs");
            }
            int length = (int) Math.max(Math.max(n, needed), 16);
            if (!room.take(length * 4L)) {
                return false;
            }
            readAll(n, length);
        }
        if (needed > memory.length) {
            int length = (int) Math.min(MAX_ENTRIES, Math.max(needed, memory.length * 2L));
            if (!room.take((length - memory.length) * 4L)) {
                // No room to grow: write back and let go, so this and later writes go through to the file.
                release();
                return false;
            }
            memory = Arrays.copyOf(memory, length);
        }
        return true;
    }

    /** Holds the file's entries for reads if it has any and reads may take the room; else holds nothing. */
    private void holdForReads() throws IOException {
        long n = (file.size() + 3) / 4;
        if (n == 0 || n > MAX_ENTRIES) {
            return; // nothing to hold, or a file get() reads (and load() rejects) as it is
        }
        int length = (int) Math.max(n, 16);
        if (room.takeForReads(length * 4L)) {
            readAll(n, length);
        }
    }

    /** Reads the file's {@code n} entries into a new copy of {@code length} entries, whose room is taken. */
    private void readAll(long n, int length) throws IOException {
        // A torn last entry (a crash cut the file inside it) reads zero-padded, as it does from the file.
        ByteBuffer b = ByteBuffer.allocate((int) n * 4);
        int[] m = new int[length];
        try {
            file.readFully(b, 0);
        } catch (IOException | RuntimeException e) {
            room.give(length * 4L);
            throw e;
        }
        for (int i = 0; i < n; i++) {
            m[i] = b.getInt(i * 4);
        }
        memory = m;
        entries = n;
    }

    /** Writes entries straight to the file (no room in memory), runs of unskipped entries at a time. */
    private void writeThrough(long first, int[] values, boolean[] skip) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(values.length * 4);
        int i = 0;
        while (i < values.length) {
            if (skip != null && skip[i]) {
                i++;
                continue;
            }
            int j = i;
            b.clear();
            while (j < values.length && (skip == null || !skip[j])) {
                b.putInt(values[j++]);
            }
            b.flip();
            file.writeFully(b, (first + i) * 4);
            i = j;
        }
    }
}
