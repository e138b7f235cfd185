package io.fastblock.storage.log;

import io.fastblock.protocol.ChunkId;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * Where each byte of each chunk lives in the log: RocksDB at {@code <data-dir>/index}, key
 * (volumeId, chunkIndex, chunkOffset) big-endian, value (segment, run position, data offset in
 * the run, length, sequence, run bytes, run data bytes). Extents of a chunk never overlap:
 * applying a write trims, splits or removes the extents it covers in the same batch, so a read
 * is a seek to the floor key and a forward scan. Each batch also stores the log position up to
 * which the index is complete (the replay checkpoint), so the log itself is the only journal.
 *
 * <p>A write whose record directly follows, in the same segment, the run that holds the chunk
 * bytes just before it extends that run's extent instead of adding a key (up to
 * {@link #MAX_RUN_BYTES} of file span, which bounds what a read of one extent must load), so a
 * sequentially written chunk costs few keys.
 *
 * <p>The cleaner's moved records and {@link LogStore#fold} change the index only where it still
 * points at the run they copied ({@link #apply} for moved records, {@link #remove}): a
 * compare-and-set on (segment, run position) inside the batch, so bytes rewritten meanwhile keep
 * their newer place. Batches are read-modify-write, so the writers ({@link #apply} on the commit
 * thread, {@link #remove} on the fold thread) take turns.
 *
 * <p>Every lookup reads the {@link ExtentCache}, which mirrors the index for the chunks it holds
 * and loads a chunk with one forward scan on a miss. The committer applies a batch in two steps:
 * {@link #prepare} changes the cache and builds the RocksDB batch, the committer answers its
 * writers (their records are already forced in the log, and lookups now see them), then
 * {@link #write(Prepared)} hands the batch to RocksDB. While appends wait, the committer lets the
 * next commits' changes join the pending batch ({@link #prepare(List, LogPosition, boolean)}), so
 * one RocksDB write takes several commits. Until then the cache is not trimmed, so
 * it keeps every chunk the batch changed, and any other writer first writes the pending batch
 * itself, so RocksDB takes batches in order. If RocksDB refuses a prepared batch, the index
 * fails every later call: the cache shows writes RocksDB lacks, which may already be answered,
 * and only a restart (replay from the checkpoint RocksDB holds) brings the two together again.
 * Scans ({@link #scan}, {@link #liveBytesBySegment}) read RocksDB.
 */
public final class ExtentIndex implements Closeable {
    static final int KEY = 24;
    static final int VALUE = 8 + 8 + 4 + 4 + 8 + 4 + 4;
    private static final int LEGACY_VALUE = 8 + 8 + 4 + 4 + 8;
    /** Largest file span of a merged run: a read of any byte of an extent loads at most this much (or one record). */
    static final int MAX_RUN_BYTES = 1 << 20;
    /**
     * RocksDB's memtable size (its default is 64 MiB). Every record the tail commits inserts a key
     * into this skip list on the commit thread; at 64 MiB a random-write load keeps ~600 000 keys in
     * it and each insert was ~9 us of cache misses, at 4 MiB ~4 us (docs/performance.md). Reads do
     * not suffer: lookups go to the {@link ExtentCache}, and a flushed memtable's keys sit in one
     * small level-0 file until compaction.
     */
    static final long MEMTABLE_BYTES = 4L << 20;
    private static final byte[] CHECKPOINT_KEY = "checkpoint".getBytes(StandardCharsets.US_ASCII);

    static {
        RocksDbLibrary.load();
    }

    /**
     * A record to index: its chunk range and where it is. For a moved record {@code originSegment}
     * and {@code originPosition} name the run it was copied from; they are -1 otherwise.
     */
    public record IndexedWrite(ChunkId chunk, long offset, int length, long sequence, long segment, long recordPosition,
                               int recordBytes, long originSegment, long originPosition, boolean trim) {
        public IndexedWrite(ChunkId chunk, long offset, int length, long sequence, long segment, long recordPosition,
                            int recordBytes, long originSegment, long originPosition) {
            this(chunk, offset, length, sequence, segment, recordPosition, recordBytes, originSegment, originPosition, false);
        }

        public IndexedWrite(ChunkId chunk, long offset, int length, long sequence, long segment, long recordPosition) {
            this(chunk, offset, length, sequence, segment, recordPosition, LogRecord.HEADER + length, -1, -1);
        }

        boolean moved() {
            return originSegment >= 0;
        }
    }

    /** Chunk bytes {@code [start, end)} to drop from the index where they still read from the run at (segment, position). */
    public record Piece(ChunkId chunk, long start, long end, long segment, long position) {
    }

    /** One index entry, as a scan returns it. */
    public record Entry(ChunkId chunk, Extent extent) {
    }

    private final DBOptions dbOptions;
    private final ColumnFamilyOptions cfOptions;
    private final RocksDB db;
    private final ColumnFamilyHandle extents;
    private final ColumnFamilyHandle meta;
    private final WriteOptions writeOptions = new WriteOptions();
    private final ExtentCache cache;
    /** Keys the batch being built deletes (only under this object's lock). */
    private final Set<Pending> deletes = new HashSet<>();
    /** How batches reach RocksDB; tests put a gate or a failure in between. */
    interface BatchWriter {
        void write(RocksDB db, WriteOptions options, WriteBatch batch) throws RocksDBException;
    }

    private volatile BatchWriter batchWriter = RocksDB::write;
    /** A batch the cache shows and RocksDB has not taken yet (only under this object's lock). */
    private Batch pending;
    /** Set once RocksDB refused a prepared batch: every later call fails with it. */
    private IOException broken;

    private ExtentIndex(DBOptions dbOptions, ColumnFamilyOptions cfOptions, RocksDB db, ColumnFamilyHandle extents,
                        ColumnFamilyHandle meta, long cachedExtents) {
        this.cache = new ExtentCache(cachedExtents);
        this.dbOptions = dbOptions;
        this.cfOptions = cfOptions;
        this.db = db;
        this.extents = extents;
        this.meta = meta;
    }

    public static ExtentIndex open(Path dir) throws IOException {
        return open(dir, ExtentCache.DEFAULT_CAPACITY);
    }

    /** Opens the index with an extent cache of at most {@code cachedExtents} extents (see {@link ExtentCache}). */
    static ExtentIndex open(Path dir, long cachedExtents) throws IOException {
        Files.createDirectories(dir);
        DBOptions dbo = new DBOptions().setCreateIfMissing(true).setCreateMissingColumnFamilies(true);
        ColumnFamilyOptions cfo = new ColumnFamilyOptions();
        cfo.setWriteBufferSize(MEMTABLE_BYTES);
        List<ColumnFamilyDescriptor> cfs = List.of(
                new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, cfo),
                new ColumnFamilyDescriptor("meta".getBytes(StandardCharsets.US_ASCII), cfo));
        List<ColumnFamilyHandle> handles = new ArrayList<>();
        try {
            RocksDB db = RocksDB.open(dbo, dir.toString(), cfs, handles);
            return new ExtentIndex(dbo, cfo, db, handles.get(0), handles.get(1), cachedExtents);
        } catch (RocksDBException e) {
            dbo.close();
            cfo.close();
            throw new IOException("cannot open index " + dir + ": " + e.getMessage(), e);
        }
    }

    static byte[] key(ChunkId chunk, long offset) {
        return ByteBuffer.allocate(KEY).putLong(chunk.volumeId()).putLong(chunk.index()).putLong(offset).array();
    }

    private static boolean sameChunk(byte[] key, byte[] chunkKey) {
        return key.length == KEY && Arrays.equals(key, 0, 16, chunkKey, 0, 16);
    }

    private static byte[] value(Extent e) {
        return ByteBuffer.allocate(VALUE).putLong(e.segment()).putLong(e.recordPosition()).putInt(e.dataOffset())
                .putInt(e.length()).putLong(e.sequence()).putInt(e.runBytes()).putInt(e.runData()).array();
    }

    private static Extent extent(byte[] key, byte[] value) {
        ByteBuffer v = ByteBuffer.wrap(value);
        long off = ByteBuffer.wrap(key).getLong(16);
        long seg = v.getLong();
        long pos = v.getLong();
        int dataOffset = v.getInt();
        int length = v.getInt();
        long seq = v.getLong();
        int runBytes = value.length >= VALUE ? v.getInt() : 0;
        int runData = value.length >= VALUE ? v.getInt() : 0;
        return new Extent(off, seg, pos, dataOffset, length, seq, runBytes, runData);
    }

    private static ChunkId chunkOf(byte[] key) {
        ByteBuffer k = ByteBuffer.wrap(key);
        return new ChunkId(k.getLong(0), k.getLong(8));
    }

    /** The log position up to which every record is in the index, or null for a fresh index. */
    private static byte[] horizonKey(int groupId) {
        return ("horizon/" + groupId).getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * The group's log horizon: every write of the group with a sequence above it is in this
     * index (see {@link LogStore#horizon}); -1 when none is recorded.
     */
    public long horizon(int groupId) throws IOException {
        try {
            byte[] v = db.get(meta, horizonKey(groupId));
            return v == null ? -1 : ByteBuffer.wrap(v).getLong();
        } catch (RocksDBException e) {
            throw new IOException("cannot read the log horizon of group " + groupId + ": " + e.getMessage(), e);
        }
    }

    /** Records (or with a negative value removes) the group's horizon, durably before it returns. */
    public void setHorizon(int groupId, long sequence) throws IOException {
        try (WriteOptions synced = new WriteOptions().setSync(true)) {
            if (sequence < 0) {
                db.delete(meta, synced, horizonKey(groupId));
            } else {
                db.put(meta, synced, horizonKey(groupId), ByteBuffer.allocate(8).putLong(sequence).array());
            }
        } catch (RocksDBException e) {
            throw new IOException("cannot record the log horizon of group " + groupId + ": " + e.getMessage(), e);
        }
    }

    public LogPosition checkpoint() throws IOException {
        try {
            byte[] v = db.get(meta, CHECKPOINT_KEY);
            if (v == null) {
                return null;
            }
            ByteBuffer b = ByteBuffer.wrap(v);
            return new LogPosition(b.getLong(), b.getLong());
        } catch (RocksDBException e) {
            throw new IOException("cannot read index checkpoint: " + e.getMessage(), e);
        }
    }

    /**
     * Applies records in log order (later wins) and the new checkpoint in one atomic batch. A
     * moved record takes over only the bytes that still read from its origin run.
     * Returns the change of live data bytes per segment (negative where bytes died).
     */
    public synchronized Map<Long, Long> apply(List<IndexedWrite> writes, LogPosition checkpoint) throws IOException {
        Prepared p = prepare(writes, checkpoint);
        write(p);
        return p.delta();
    }

    /**
     * What one {@link #prepare} applied to the cache; {@link #write(Prepared)} gives its batch to
     * RocksDB. Several prepares may share one batch ({@code join}). {@code delta} is the change of
     * live data bytes per segment of this prepare alone.
     */
    public static final class Prepared {
        private final Batch batch;
        private final Map<Long, Long> delta;

        private Prepared(Batch batch, Map<Long, Long> delta) {
            this.batch = batch;
            this.delta = delta;
        }

        public Map<Long, Long> delta() {
            return delta;
        }
    }

    /** A RocksDB batch the cache shows, and how many prepares it holds. */
    private static final class Batch {
        final WriteBatch writes = new WriteBatch();
        int prepares;
    }

    /**
     * The first half of {@link #apply}: the cache shows the records from now on (lookups return
     * them), and the batch with the new checkpoint waits for {@link #write(Prepared)}. The caller
     * must have forced the records first. A pending batch from an earlier call is written first,
     * unless {@code join}: then these records and the new checkpoint go into that batch, and one
     * RocksDB write takes both (the committer joins while records wait for it).
     */
    public synchronized Prepared prepare(List<IndexedWrite> writes, LogPosition checkpoint, boolean join) throws IOException {
        if (!join || pending == null) {
            writePending();
        } else if (broken != null) {
            throw broken;
        }
        boolean joined = pending != null;
        Batch batch = joined ? pending : new Batch();
        Map<Long, Long> delta = new HashMap<>();
        try {
            for (IndexedWrite w : writes) {
                if (w.length() == 0) {
                    continue;
                }
                ExtentCache.Chunk chunk = cached(w.chunk());
                if (w.trim()) {
                    // Older extents in the range die; a hole takes their place (see Extent#isHole).
                    replace(batch.writes, chunk, w.chunk(), w.offset(), w.offset() + w.length(), -1, -1, null, delta);
                    put(batch.writes, chunk, w.chunk(), new Extent(w.offset(), Extent.holeSegment(w.segment()), w.recordPosition(), 0,
                            w.length(), w.sequence(), 0, 0));
                    continue;
                }
                Extent target = new Extent(w.offset(), w.segment(), w.recordPosition(), 0, w.length(), w.sequence(),
                        w.recordBytes(), w.length());
                if (w.moved()) {
                    replace(batch.writes, chunk, w.chunk(), w.offset(), w.offset() + w.length(), w.originSegment(),
                            w.originPosition(), target, delta);
                } else {
                    replace(batch.writes, chunk, w.chunk(), w.offset(), w.offset() + w.length(), -1, -1, null, delta);
                    insert(batch.writes, chunk, w.chunk(), target, delta);
                }
            }
            batch.writes.put(meta, CHECKPOINT_KEY, ByteBuffer.allocate(16).putLong(checkpoint.segment())
                    .putLong(checkpoint.position()).array());
            addDeletes(batch.writes);
        } catch (RocksDBException | RuntimeException e) {
            if (joined) {
                // The batch also holds earlier prepares, whose writers may have been answered: as for a
                // refused write, the index stops here until a restart replays the log.
                broken = new IOException("index update failed, the index refuses further use until a restart: " + e, e);
                throw broken;
            }
            batch.writes.close();
            forget(); // the cache may hold part of a batch RocksDB never took
            if (e instanceof RocksDBException r) {
                throw new IOException("index update failed: " + r.getMessage(), r);
            }
            throw (RuntimeException) e;
        }
        batch.prepares++;
        pending = batch;
        return new Prepared(batch, delta);
    }

    /** Prepares with {@code join} false: a pending batch is written first. */
    public Prepared prepare(List<IndexedWrite> writes, LogPosition checkpoint) throws IOException {
        return prepare(writes, checkpoint, false);
    }

    /** How many prepares the pending batch holds (0: none is pending). */
    public synchronized int pendingPrepares() {
        return pending == null ? 0 : pending.prepares;
    }

    /**
     * Gives a prepared batch to RocksDB (not synced: the log replays whatever an unsynced index
     * loses). Nothing to do if another writer already wrote it.
     */
    public synchronized void write(Prepared prepared) throws IOException {
        if (prepared.batch == pending) {
            writePending();
        } else if (broken != null) {
            throw broken;
        }
    }

    private void writePending() throws IOException {
        if (broken != null) {
            throw broken;
        }
        Batch p = pending;
        if (p == null) {
            return;
        }
        pending = null;
        try {
            write(p.writes); // its deletes went in when it was prepared
        } catch (RocksDBException | RuntimeException e) {
            // The cache shows this batch and its writers may have been answered: dropping the cache
            // would serve older bytes, so the index stops here until a restart replays the log.
            broken = new IOException("index update failed, the index refuses further use until a restart: " + e, e);
            throw broken;
        } finally {
            p.writes.close();
        }
    }

    /**
     * Drops each piece's bytes where they still read from the piece's run (entries changed
     * meanwhile stay), in one batch that is synced before this returns.
     * Returns the change of live data bytes per segment.
     */
    public Map<Long, Long> remove(List<Piece> pieces) throws IOException {
        Map<Long, Long> delta = new HashMap<>();
        synchronized (this) {
            writePending();
            try (WriteBatch batch = new WriteBatch()) {
                for (Piece p : pieces) {
                    replace(batch, cached(p.chunk()), p.chunk(), p.start(), p.end(), p.segment(), p.position(), null, delta);
                }
                write(batch);
            } catch (RocksDBException e) {
                forget();
                throw new IOException("index update failed: " + e.getMessage(), e);
            } catch (RuntimeException e) {
                forget();
                throw e;
            }
        }
        // Synced outside the turn, so the commit thread's next batch does not wait for this fsync.
        sync();
        return delta;
    }

    /** Writes a batch whose changes the cache already holds; the cache is trimmed only now, between batches. */
    private void write(WriteBatch batch) throws RocksDBException {
        addDeletes(batch);
        batchWriter.write(db, writeOptions, batch);
        cache.trim();
    }

    private void addDeletes(WriteBatch batch) throws RocksDBException {
        for (Pending p : deletes) {
            batch.delete(extents, key(p.chunk(), p.offset()));
        }
        deletes.clear();
    }

    /** After a failed batch: the cache already holds its changes, so it starts again from RocksDB. */
    private void forget() {
        deletes.clear();
        cache.clear();
    }

    /** Makes every index update so far durable (the cleaner calls this before deleting a segment). */
    public void sync() throws IOException {
        try {
            db.syncWal();
        } catch (RocksDBException e) {
            throw new IOException("index sync failed: " + e.getMessage(), e);
        }
    }

    /** The chunk's extents from the cache, read from RocksDB (one forward scan) if it does not hold them. */
    private ExtentCache.Chunk cached(ChunkId chunk) throws RocksDBException {
        ExtentCache.Chunk c = cache.get(chunk);
        if (c != null) {
            return c;
        }
        c = cache.add(chunk);
        byte[] first = key(chunk, 0);
        try (ReadOptions ro = new ReadOptions(); RocksIterator it = db.newIterator(extents, ro)) {
            for (it.seek(first); it.isValid(); it.next()) {
                byte[] k = it.key();
                if (!sameChunk(k, first)) {
                    break;
                }
                cache.put(c, extent(k, it.value()));
            }
            it.status();
        } catch (RocksDBException | RuntimeException e) {
            cache.clear(); // not a half-loaded chunk
            throw e;
        }
        return c;
    }

    private void put(WriteBatch batch, ExtentCache.Chunk c, ChunkId chunk, Extent e) throws RocksDBException {
        deletes.remove(new Pending(chunk, e.chunkOffset()));
        batch.put(extents, key(chunk, e.chunkOffset()), value(e));
        cache.put(c, e);
    }

    /**
     * Deletes are written when the batch is (see {@link #write}), and only for keys no later put
     * of the batch reuses: an overwrite of the same blocks would otherwise put a tombstone and a
     * value for one key into the memtable.
     */
    private void delete(WriteBatch batch, ExtentCache.Chunk c, ChunkId chunk, long offset) {
        deletes.add(new Pending(chunk, offset));
        cache.remove(c, offset);
    }

    /** A key deleted by the batch being built. */
    private record Pending(ChunkId chunk, long offset) {
    }

    /**
     * Within {@code [start, end)} of {@code chunk}: every extent (or, if {@code srcSegment >= 0},
     * every extent reading from run (srcSegment, srcPosition)) loses the covered bytes, which go to
     * {@code target}'s run (mapped as target.chunkOffset -> target.dataOffset) or, with a null
     * target, out of the index.
     */
    private void replace(WriteBatch batch, ExtentCache.Chunk c, ChunkId chunk, long start, long end,
                         long srcSegment, long srcPosition, Extent target, Map<Long, Long> delta) throws RocksDBException {
        for (Extent e : c.overlapping(start, end)) {
            if (srcSegment != -1 && !e.in(srcSegment, srcPosition)) {
                continue; // compare-and-set: only the extents of the named run (or hole)
            }
            long a = Math.max(start, e.chunkOffset());
            long b = Math.min(end, e.end());
            delete(batch, c, chunk, e.chunkOffset());
            if (a > e.chunkOffset()) {
                put(batch, c, chunk, new Extent(e.chunkOffset(), e.segment(), e.recordPosition(), e.dataOffset(),
                        (int) (a - e.chunkOffset()), e.sequence(), e.runBytes(), e.runData()));
            }
            if (b < e.end()) {
                put(batch, c, chunk, new Extent(b, e.segment(), e.recordPosition(), e.dataOffset() + (int) (b - e.chunkOffset()),
                        (int) (e.end() - b), e.sequence(), e.runBytes(), e.runData()));
            }
            if (!e.isHole()) {
                delta.merge(e.segment(), -(b - a), Long::sum);
            }
            if (target != null) {
                put(batch, c, chunk, new Extent(a, target.segment(), target.recordPosition(),
                        target.dataOffset() + (int) (a - target.chunkOffset()), (int) (b - a), e.sequence(),
                        target.runBytes(), target.runData()));
                delta.merge(target.segment(), b - a, Long::sum);
            }
        }
    }

    /** Puts a fresh record's extent, extending the extent just before it when its run ends right where the record starts. */
    private void insert(WriteBatch batch, ExtentCache.Chunk c, ChunkId chunk, Extent w, Map<Long, Long> delta)
            throws RocksDBException {
        delta.merge(w.segment(), (long) w.length(), Long::sum);
        Extent left = c.endingAt(w.chunkOffset());
        if (left != null && left.segment() == w.segment() && left.runBytes() > 0
                && left.recordPosition() + left.runBytes() == w.recordPosition()
                && left.dataOffset() + left.length() == left.runData()
                && (long) left.runBytes() + w.runBytes() <= MAX_RUN_BYTES) {
            put(batch, c, chunk, new Extent(left.chunkOffset(), left.segment(), left.recordPosition(), left.dataOffset(),
                    left.length() + w.length(), Math.max(left.sequence(), w.sequence()), left.runBytes() + w.runBytes(),
                    left.runData() + w.length()));
            return;
        }
        put(batch, c, chunk, w);
    }

    /** The extents of {@code chunk} overlapping {@code [start, end)}, in offset order (unclipped). */
    public synchronized List<Extent> find(ChunkId chunk, long start, long end) throws IOException {
        if (broken != null) {
            throw broken;
        }
        try {
            List<Extent> found = cached(chunk).overlapping(start, end);
            if (pending == null) {
                cache.trim(); // never while a batch is pending: its chunks exist only in the cache
            }
            return found;
        } catch (RocksDBException e) {
            throw new IOException("index read failed: " + e.getMessage(), e);
        }
    }

    /** Up to {@code limit} entries in key order, starting after {@code after} (null: from the first). */
    public List<Entry> scan(Entry after, int limit) throws IOException {
        synchronized (this) {
            writePending(); // a scan sees every batch whose writers were answered
        }
        List<Entry> out = new ArrayList<>();
        try (ReadOptions ro = new ReadOptions(); RocksIterator it = db.newIterator(extents, ro)) {
            if (after == null) {
                it.seekToFirst();
            } else {
                byte[] k = key(after.chunk(), after.extent().chunkOffset());
                it.seek(k);
                if (it.isValid() && Arrays.equals(it.key(), k)) {
                    it.next();
                }
            }
            for (; it.isValid() && out.size() < limit; it.next()) {
                byte[] k = it.key();
                if (k.length == KEY) {
                    out.add(new Entry(chunkOf(k), extent(k, it.value())));
                }
            }
            it.status();
        } catch (RocksDBException e) {
            throw new IOException("index scan failed: " + e.getMessage(), e);
        }
        return out;
    }

    /** Live bytes per segment, computed by a full scan (rebuilds the accounting at open; not on any hot path). */
    public Map<Long, Long> liveBytesBySegment() {
        Map<Long, Long> live = new HashMap<>();
        try (RocksIterator it = db.newIterator(extents)) {
            for (it.seekToFirst(); it.isValid(); it.next()) {
                Extent e = extent(it.key(), it.value());
                if (!e.isHole()) {
                    live.merge(e.segment(), (long) e.length(), Long::sum);
                }
            }
        }
        return live;
    }

    /** Tests: how batches reach RocksDB from now on. */
    void writeBatchesWith(BatchWriter writer) {
        batchWriter = writer;
    }

    /** Extents the cache holds now (tests). */
    synchronized long cachedExtents() {
        return cache.extents();
    }

    /** Bytes of the extents' SST files, i.e. what memtable flushes have written so far (tests). */
    long flushedBytes() throws RocksDBException {
        return db.getLongProperty(extents, "rocksdb.total-sst-files-size");
    }

    /** Tombstones in the extents' active memtable (tests). */
    long memtableDeletes() throws RocksDBException {
        return db.getLongProperty(extents, "rocksdb.num-deletes-active-mem-table");
    }

    @Override
    public void close() {
        synchronized (this) {
            try {
                writePending();
            } catch (IOException ignored) {
                // the log replays whatever the index lost
            }
        }
        try {
            db.syncWal();
        } catch (RocksDBException ignored) {
            // the log replays whatever the index lost
        }
        extents.close();
        meta.close();
        db.close();
        writeOptions.close();
        dbOptions.close();
        cfOptions.close();
    }
}
