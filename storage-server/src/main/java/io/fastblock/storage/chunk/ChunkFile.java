package io.fastblock.storage.chunk;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.io.DeviceReads;
import io.fastblock.storage.io.FileIo;
import io.fastblock.storage.io.FileIoFactory;
import io.fastblock.storage.io.MappingBudget;
import io.fastblock.storage.io.ResidentPages;
import io.netty.buffer.ByteBuf;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One chunk's data file and its checksum sidecar ({@link BlockSums}): a CRC32C per 4 KiB block.
 * Bytes past the end of the data file count as zeros. A stored value of 0 means "never written"
 * and is valid for an all-zero block, so holes need no entries (a real CRC of 0 is accepted as
 * well, at a 2^-32 chance of missing a flip).
 *
 * <p>Writes update the data, then the checksums in memory; neither is forced, and the sidecar file
 * is written only when the chunk is forced: after a crash or power loss the two may disagree for
 * any block written since the last checkpoint. {@link ChunkStore} therefore rebuilds the sidecar
 * of every chunk written since its last checkpoint before trusting it, so a mismatch found at any
 * other time is real corruption.
 *
 * <p>Not thread-safe: a chunk's work runs on its {@link ChunkStore} stripe only.
 */
final class ChunkFile implements Closeable {
    static final int BLOCK = 4096;
    private static final ThreadLocal<ByteBuffer> SCRATCH = ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(BLOCK * 64));

    private final ChunkId chunk;
    /** Replaced only by {@link #replaceData} (compaction), on the chunk's stripe like every other use. */
    private volatile FileIo data;
    private final BlockSums sums;
    private final AllocationMap map;
    private final FileIoFactory files;
    /**
     * The data file opened again for the reads that answer clients, without readahead
     * ({@link FileIoFactory#openNoReadahead}); opened at the first such read, so only chunks that are
     * read hold a fourth descriptor. Null before, or where the factory has none: then {@link #data}.
     */
    private volatile FileIo reads;
    private boolean readsTried;
    /** The data file mapped for large client reads ({@link #readResident}); made at the first, dropped with {@link #reads}. */
    private ResidentPages resident;
    private boolean residentTried;

    private ChunkFile(ChunkId chunk, FileIo data, BlockSums sums, AllocationMap map, FileIoFactory files) {
        this.chunk = chunk;
        this.data = data;
        this.sums = sums;
        this.map = map;
        this.files = files;
    }

    static Path sidecarOf(Path dataFile) {
        return dataFile.resolveSibling(dataFile.getFileName() + ".crc");
    }

    /** Where {@link ChunkSparsifier} builds the compacted copy; a leftover one is deleted when the store opens. */
    static Path sparseTempOf(Path dataFile) {
        return dataFile.resolveSibling(dataFile.getFileName() + ".sparse");
    }

    static Path mapOf(Path dataFile) {
        return dataFile.resolveSibling(dataFile.getFileName() + ".map");
    }

    static ChunkFile open(ChunkId chunk, Path file, FileIoFactory files, boolean create) throws IOException {
        return open(chunk, file, files, create, SumMemory.UNLIMITED);
    }

    /** Opens the chunk with its checksums held in memory while written, within {@code room}. */
    static ChunkFile open(ChunkId chunk, Path file, FileIoFactory files, boolean create, SumMemory room) throws IOException {
        boolean unmapped = !java.nio.file.Files.exists(mapOf(file));
        FileIo d = files.open(file, create);
        FileIo s = null;
        FileIo mf = null;
        try {
            s = files.open(sidecarOf(file), true);
            mf = files.open(mapOf(file), true);
            AllocationMap m = new AllocationMap(mf);
            ChunkFile f = new ChunkFile(chunk, d, new BlockSums(s, room), m, files);
            if (unmapped && d.size() > 0) {
                // A chunk file from before allocation maps: every block it spans may hold data, so
                // count them all as allocated (reporting a hole as data is safe, the reverse is not).
                m.set(0, f.blocks(), true);
            }
            return f;
        } catch (IOException | RuntimeException e) {
            d.close();
            if (s != null) {
                s.close();
            }
            if (mf != null) {
                mf.close();
            }
            throw e;
        }
    }

    ChunkId chunk() {
        return chunk;
    }

    long size() throws IOException {
        return data.size();
    }

    private static ByteBuffer scratch(int bytes) {
        ByteBuffer b = SCRATCH.get();
        if (b.capacity() < bytes) {
            b = ByteBuffer.allocateDirect(Math.max(bytes, b.capacity() * 2));
            SCRATCH.set(b);
        }
        b.clear().limit(bytes);
        return b;
    }

    static int crcOf(ByteBuffer block) {
        CRC32C c = new CRC32C();
        c.update(block.duplicate());
        return (int) c.getValue();
    }

    private static boolean allZero(ByteBuffer block) {
        for (int i = block.position(); i < block.limit(); i++) {
            if (block.get(i) != 0) {
                return false;
            }
        }
        return true;
    }

    private static boolean matches(ByteBuffer block, int stored) {
        return crcOf(block) == stored || (stored == 0 && allZero(block));
    }

    /** Reads whole blocks {@code [first, first+count)} into {@code dst} (zeros past the end of the file). */
    private void readBlocks(long first, int count, ByteBuffer dst) throws IOException {
        readBlocks(data, first, count, dst);
    }

    private void readBlocks(FileIo from, long first, int count, ByteBuffer dst) throws IOException {
        int start = dst.position();
        dst.limit(start + count * BLOCK);
        from.readFully(dst, first * BLOCK);
        zerosToLimit(dst, start);
    }

    /** Zeros from {@code dst}'s position to its limit (blocks past the end of the file), then back to {@code start}. */
    private static void zerosToLimit(ByteBuffer dst, int start) {
        while (dst.hasRemaining()) {
            dst.put((byte) 0);
        }
        dst.position(start);
    }

    /** The handle {@link #read} reads through: {@link #reads} where there is one, else {@link #data}. */
    private FileIo clientReads() {
        FileIo r = reads;
        return r != null ? r : openClientReads(); // a volatile read per read once open, no lock
    }

    private synchronized FileIo openClientReads() {
        if (!readsTried) {
            readsTried = true;
            try {
                reads = files.openNoReadahead(data.path());
            } catch (IOException e) {
                // Reads through the data handle are as correct, only with readahead.
                if (!TOLD_NO_READS.getAndSet(true)) {
                    LOG.warn("chunk {}: reading with readahead: {}", chunk, e.toString());
                }
            }
        }
        return reads != null ? reads : data;
    }

    private static final Logger LOG = LoggerFactory.getLogger(ChunkFile.class);
    private static final AtomicBoolean TOLD_NO_READS = new AtomicBoolean();

    /** Drops the data file's mapping before the file is cut; false while views of a mapping are still out. */
    private synchronized boolean unmapped() {
        ResidentPages r = resident;
        if (r == null) {
            return true;
        }
        r.unmap();
        return !r.mapped();
    }

    private synchronized void closeReads() throws IOException {
        FileIo r = reads;
        reads = null;
        readsTried = false;
        if (resident != null) {
            resident.close(); // unmapped once the views still out are released
            resident = null;
        }
        residentTried = false;
        if (r != null) {
            r.close();
        }
    }

    /** The stored checksums of blocks {@code [first, first+count)}; 0 where the sidecar has none. */
    private int[] storedSums(long first, int count) throws IOException {
        return sums.get(first, count);
    }

    private void storeSums(long first, int[] values, boolean[] skip) throws IOException {
        sums.put(first, values, skip);
    }

    /** Largest write into the data file, and the alignment of its pieces (see {@link #writeData}). */
    static final int WRITE_PIECE = 16 * 1024;

    /**
     * Writes {@code src} at {@code offset} and updates the checksums of the blocks it touches.
     * A partly covered block is read, checked and merged; if it was already corrupt its checksum
     * is left alone so the block stays visibly bad until it is repaired from another replica.
     */
    void write(long offset, ByteBuffer[] src) throws IOException {
        write(offset, src, true);
    }

    /**
     * As {@link #write(long, ByteBuffer[])}; with {@code allocate} false the allocation map is left
     * alone (a repair restores bytes, it does not write anything new).
     */
    void write(long offset, ByteBuffer[] src, boolean allocate) throws IOException {
        int length = 0;
        for (ByteBuffer b : src) {
            length += b.remaining();
        }
        if (length == 0) {
            return;
        }
        long first = offset / BLOCK;
        long last = (offset + length - 1) / BLOCK;
        int count = (int) (last - first + 1);
        // Allocated before the data lands (see AllocationMap's crash rules).
        if (allocate) {
            map.set(first, count, true);
        }
        int head = (int) (offset - first * BLOCK);
        int tailEnd = (int) (offset + length - first * BLOCK);
        boolean partialFirst = head != 0;
        boolean partialLast = tailEnd != count * BLOCK;
        if (!partialFirst && !partialLast) {
            // Whole blocks: their checksums come straight from the caller's buffers, no staging copy,
            // and the data goes in gathered writes however many buffers the frame arrived in.
            writeData(src, offset);
            storeSums(first, blockSums(src, count), null);
            return;
        }
        ByteBuffer span = scratch(count * BLOCK);
        int[] old = storedSums(first, count);
        boolean[] keepBad = new boolean[count];
        if (partialFirst) {
            keepBad[0] = !loadAndCheck(span, 0, first, old[0]);
        }
        if (partialLast && (count > 1 || !partialFirst)) {
            keepBad[count - 1] = !loadAndCheck(span, count - 1, last, old[count - 1]);
        }
        span.position(head);
        for (ByteBuffer b : src) {
            span.put(b.duplicate());
        }
        writeData(src, offset);
        int[] fresh = new int[count];
        for (int i = 0; i < count; i++) {
            fresh[i] = crcOf(span.duplicate().position(i * BLOCK).limit((i + 1) * BLOCK));
        }
        storeSums(first, fresh, keepBad);
    }

    /**
     * Writes {@code srcs} (left as they are) at {@code position} in writes that neither exceed nor cross a
     * {@link #WRITE_PIECE} boundary of the file. The page cache sizes a new folio after the write
     * that fills it, and ext4 walks every block of a folio on each later write into it: a 4 KiB
     * overwrite of data laid down by a 1 MiB write cost ~20 µs of kernel CPU here, ~3 µs after
     * 64 KiB writes, ~1.7 µs after 16 KiB writes. In a cluster prefilled with 1 MiB writes, 16 KiB
     * pieces gave 4 KiB random writes 2-9% more IOPS than 64 KiB pieces and 4 KiB pieces nothing
     * more, while 1 MiB writes pay a syscall per piece (docs/performance.md). Chunks are
     * overwritten in place at any size; the log, only appended, is not split.
     */
    private void writeData(ByteBuffer[] srcs, long position) throws IOException {
        List<ByteBuffer> piece = new ArrayList<>(4);
        long at = position;
        int pieceBytes = 0;
        for (ByteBuffer b : srcs) {
            ByteBuffer rest = b.duplicate();
            while (rest.hasRemaining()) {
                int room = WRITE_PIECE - (int) ((at + pieceBytes) % WRITE_PIECE);
                int take = Math.min(rest.remaining(), room);
                piece.add(rest.slice(rest.position(), take));
                rest.position(rest.position() + take);
                pieceBytes += take;
                if (take == room) {
                    data.writeFully(piece.toArray(new ByteBuffer[0]), at);
                    at += pieceBytes;
                    piece.clear();
                    pieceBytes = 0;
                }
            }
        }
        if (pieceBytes > 0) {
            data.writeFully(piece.toArray(new ByteBuffer[0]), at);
        }
    }

    /** The checksum of each of the {@code count} whole blocks that {@code src} holds back to back. */
    private static int[] blockSums(ByteBuffer[] src, int count) {
        int[] out = new int[count];
        CRC32C c = new CRC32C();
        int filled = 0;
        int block = 0;
        for (ByteBuffer b : src) {
            ByteBuffer d = b.duplicate();
            while (d.hasRemaining()) {
                int n = Math.min(BLOCK - filled, d.remaining());
                ByteBuffer piece = d.duplicate();
                piece.limit(d.position() + n);
                c.update(piece);
                d.position(d.position() + n);
                filled += n;
                if (filled == BLOCK) {
                    out[block++] = (int) c.getValue();
                    c.reset();
                    filled = 0;
                }
            }
        }
        return out;
    }

    private boolean loadAndCheck(ByteBuffer span, int slot, long block, int stored) throws IOException {
        ByteBuffer b = span.duplicate().position(slot * BLOCK).limit((slot + 1) * BLOCK);
        readBlocks(block, 1, b);
        return matches(b.position(slot * BLOCK).limit((slot + 1) * BLOCK), stored);
    }

    /**
     * Reads {@code length} bytes at {@code offset} into {@code dst}, checking every block touched.
     * @throws CorruptBlockException naming the range from the first to the last bad block
     */
    void read(long offset, int length, ByteBuffer dst) throws IOException {
        if (length == 0) {
            return;
        }
        long first = offset / BLOCK;
        long last = (offset + length - 1) / BLOCK;
        int count = (int) (last - first + 1);
        // Whole blocks (every read through the gateway): straight into dst, checked there; no copy.
        boolean aligned = offset % BLOCK == 0 && length % BLOCK == 0 && dst.remaining() >= length;
        ByteBuffer span = aligned ? dst.slice(dst.position(), length) : scratch(count * BLOCK);
        readBlocks(clientReads(), first, count, span);
        long[] bad = check(first, count, span);
        if (bad != null) {
            throw new CorruptBlockException(chunk, bad[0] * BLOCK, (bad[1] - bad[0] + 1) * BLOCK);
        }
        if (aligned) {
            dst.position(dst.position() + length);
            return;
        }
        int from = (int) (offset - first * BLOCK);
        dst.put(span.duplicate().position(from).limit(from + length));
    }

    /**
     * {@code [offset, offset + length)} checked against its checksums, as a read-only view of the
     * page cache, when the range is whole blocks inside the file and all in memory; else null, and
     * the caller reads it with {@link #read}. The view shows later writes (see {@link ResidentPages}).
     */
    ByteBuf readResident(long offset, int length, MappingBudget budget) throws IOException {
        if (offset % BLOCK != 0 || length % BLOCK != 0) {
            return null;
        }
        ResidentPages r = residentPages(budget);
        ByteBuf view = r == null ? null : r.range(offset, length);
        if (view == null) {
            return null;
        }
        long[] bad = check(offset / BLOCK, length / BLOCK, view.nioBuffer());
        if (bad != null) {
            view.release();
            throw new CorruptBlockException(chunk, bad[0] * BLOCK, (bad[1] - bad[0] + 1) * BLOCK);
        }
        return view;
    }

    private synchronized ResidentPages residentPages(MappingBudget budget) {
        if (!residentTried) {
            residentTried = true;
            resident = ResidentPages.of(data, budget);
        }
        return resident;
    }

    /** First and last bad block among {@code count} blocks from {@code first} held in {@code span}, or null. */
    private long[] check(long first, int count, ByteBuffer span) throws IOException {
        int[] stored = sums.getForRead(first, count);
        long lo = -1;
        long hi = -1;
        for (int i = 0; i < count; i++) {
            if (!matches(span.duplicate().position(i * BLOCK).limit((i + 1) * BLOCK), stored[i])) {
                if (lo < 0) {
                    lo = first + i;
                }
                hi = first + i;
            }
        }
        return lo < 0 ? null : new long[]{lo, hi};
    }

    /**
     * Checks blocks {@code [first, first+count)} as the device holds them, read around the page cache
     * where {@code files} can ({@link FileIoFactory#openDirectReads}), else through it; returns the bad
     * stretches (empty when all is well). A scrub that read cached copies would leave rot under any
     * cached page unfound, and its reads would refill the cache with the pages memory reclaim had
     * dropped, in the large folios that readahead makes: every later 4 KiB write into one of those
     * walks all of its blocks (docs/performance.md, "Scrub reads around the page cache").
     */
    List<BlockRange> verify(long first, int count, FileIoFactory files) throws IOException {
        ByteBuffer span = scratch(count * BLOCK);
        if (!readFromDevice(first, count, span, files)) {
            readBlocks(first, count, span);
        }
        int[] stored = storedSums(first, count);
        List<BlockRange> out = new ArrayList<>();
        long runStart = -1;
        for (int i = 0; i <= count; i++) {
            boolean bad = i < count && !matches(span.duplicate().position(i * BLOCK).limit((i + 1) * BLOCK), stored[i]);
            if (bad && runStart < 0) {
                runStart = first + i;
            } else if (!bad && runStart >= 0) {
                out.add(new BlockRange(runStart * BLOCK, (first + i - runStart) * BLOCK));
                runStart = -1;
            }
        }
        return out;
    }

    /**
     * Reads whole blocks {@code [first, first+count)} into {@code dst} (zeros past the end of the file)
     * through an O_DIRECT handle; false, with nothing read, where the file cannot be read so.
     */
    private boolean readFromDevice(long first, int count, ByteBuffer dst, FileIoFactory files) throws IOException {
        try (FileIo direct = files.openDirectReads(data.path())) {
            if (direct == null) {
                return false;
            }
            ByteBuffer got = DeviceReads.read(direct, first * BLOCK, count * BLOCK);
            int start = dst.position();
            dst.limit(start + count * BLOCK);
            dst.put(got);
            zerosToLimit(dst, start);
            return true;
        }
    }

    /** Number of blocks the data file spans. */
    long blocks() throws IOException {
        return (data.size() + BLOCK - 1) / BLOCK;
    }

    /** Recomputes every checksum from the data as it is now (after an unclean shutdown the sidecar may be torn). */
    void rebuildChecksums() throws IOException {
        long blocks = blocks();
        int step = 64;
        for (long b = 0; b < blocks; b += step) {
            int n = (int) Math.min(step, blocks - b);
            ByteBuffer span = scratch(n * BLOCK);
            readBlocks(b, n, span);
            int[] values = new int[n];
            for (int i = 0; i < n; i++) {
                values[i] = crcOf(span.duplicate().position(i * BLOCK).limit((i + 1) * BLOCK));
            }
            storeSums(b, values, null);
        }
        sums.truncate(blocks);
    }

    /**
     * Gives back blocks {@code [offset, offset + length)} (block-aligned): afterwards they read as
     * zeros and are not allocated. A range reaching the end of the data file cuts the file (its
     * space returns), unless a view of the file's mapping is still out: then it is zeroed as an
     * interior range is, since a file cut under its mapping faults the process. An interior range of
     * at least {@link io.fastblock.storage.io.HolePunch#MIN_BYTES} becomes a hole (its blocks
     * return), a smaller one is overwritten with zeros: it reads and counts right but keeps its
     * blocks until the chunk is cut or removed.
     */
    long trim(long offset, long length) throws IOException {
        long zeroWritten = 0;
        if (offset % BLOCK != 0 || length % BLOCK != 0) {
            throw new IllegalArgumentException("trim of " + offset + "+" + length + " is not block-aligned");
        }
        long size = data.size();
        long end = offset + length;
        if (offset < size) {
            if (end >= size && unmapped()) {
                data.truncate(offset);
                sums.truncate(offset / BLOCK);
            } else {
                // Interior, or the end while a view of the file's mapping is still on its way out
                // (a file cut under a mapping faults the process when it is read, see io.ResidentPages):
                // the file keeps its length.
                long zeroed = Math.min(end, size) - offset;
                // Large ranges become holes where the file layer can punch them (see io.HolePunch).
                data.zeroRange(offset, zeroed);
                if (zeroed < io.fastblock.storage.io.HolePunch.MIN_BYTES) {
                    // Zero-written, so still on disk until a compaction rewrites the file sparse.
                    zeroWritten = zeroed;
                }
                // 0 is the "never written" checksum, right for zeros.
                sums.zero(offset / BLOCK, end / BLOCK);
            }
        }
        // Cleared after the zeros are in place (see AllocationMap's crash rules). The map may reach
        // past the data file (a resync marks allocated zero blocks it kept sparse), so it is cut
        // only when the trim covers all of it.
        if (end / BLOCK >= map.fileSize() * 8) {
            map.truncate(offset / BLOCK);
        } else {
            map.set(offset / BLOCK, length / BLOCK, false);
        }
        return zeroWritten;
    }

    /**
     * Copies the allocated blocks among {@code [first, first + count)} of the data file into
     * {@code dst} at the same offsets; with {@code zeroRest} the other blocks that {@code dst}
     * already spans are overwritten with zeros (a range written or trimmed after an earlier copy
     * of it). Raw bytes, no checksum check: the copy must equal the file, bad blocks included, so
     * the sidecar stays true for it. Returns the bytes copied.
     */
    long copyAllocated(FileIo dst, long first, long count, boolean zeroRest) throws IOException {
        long size = data.size();
        long from = first * BLOCK;
        long end = Math.min((first + count) * BLOCK, size);
        if (end <= from) {
            return 0;
        }
        long copied = 0;
        long at = from;
        for (io.fastblock.protocol.Extents.Range r : map.extents(from, end - from, BLOCK).ranges()) {
            if (zeroRest && r.offset() > at) {
                zeroWithin(dst, at, r.offset());
            }
            for (long o = r.offset(); o < r.end(); o += BLOCK * 64) {
                int n = (int) Math.min(BLOCK * 64, r.end() - o);
                ByteBuffer b = scratch(n);
                data.readFully(b, o);
                b.flip();
                dst.writeFully(b, o);
                copied += n;
            }
            at = r.end();
        }
        if (zeroRest && at < end) {
            zeroWithin(dst, at, end);
        }
        return copied;
    }

    private static void zeroWithin(FileIo dst, long from, long to) throws IOException {
        long stop = Math.min(to, dst.size());
        if (stop > from) {
            dst.zeroRange(from, stop - from);
        }
    }

    /**
     * Gives the compacted copy at {@code temp} the data file's length, makes it durable, and puts
     * it in the data file's place by an atomic rename (then syncs the directory). A crash before
     * the rename leaves the old file whole (the temp is deleted at the next open), one after it
     * the complete new file; checksums and allocation map describe both alike.
     */
    void replaceData(FileIo temp, FileIoFactory files) throws IOException {
        long size = data.size();
        if (temp.size() > size) {
            temp.truncate(size);
        } else if (temp.size() < size) {
            // A hole up to the end: the last byte gives the file its length (zeros, as the original reads).
            temp.writeFully(ByteBuffer.allocate(1), size - 1);
        }
        temp.force(true);
        Path target = data.path();
        Path from = temp.path();
        temp.close();
        closeReads(); // a handle on the old file would go on reading it after the rename
        data.close();
        try {
            files.rename(from, target);
        } finally {
            // Reopened either way: the new file after the rename, the untouched old one if it failed.
            data = files.open(target, false);
        }
        files.syncDirectory(target.getParent());
    }

    /** Allocated ranges within {@code [offset, offset + length)}. */
    io.fastblock.protocol.Extents extents(long offset, long length) throws IOException {
        return map.extents(offset, length, BLOCK);
    }

    /** Sets the allocation of whole blocks {@code [offset, offset + length)} as a replica that knows better says. */
    void allocate(long offset, long length, boolean allocated) throws IOException {
        map.set(offset / BLOCK, (length + BLOCK - 1) / BLOCK, allocated);
    }

    /**
     * Forces data, then checksums and the allocation map: after this all describe the same bytes
     * durably. Safe off the chunk's stripe (a checkpoint forces from its own thread).
     */
    void force() throws IOException {
        data.force(false);
        sums.force();
        map.force();
    }

    /** The checksums leave memory if no read asked for them since the last call and none are pending (see BlockSums). */
    boolean releaseSumsIfUnread() throws IOException {
        return sums.releaseIfUnread();
    }

    /** The chunk is no longer being written: its checksums go back to the file and leave memory. */
    void releaseSums() throws IOException {
        sums.release();
    }

    /** Whether the checksums are held in memory (tests). */
    boolean sumsHeld() {
        return sums.held();
    }

    @Override
    public void close() throws IOException {
        try {
            try {
                closeReads();
            } finally {
                data.close();
            }
        } finally {
            try {
                sums.close();
            } finally {
                map.close();
            }
        }
    }
}
