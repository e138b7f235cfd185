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
import java.util.List;
import java.util.Map;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteBatchWithIndex;
import org.rocksdb.WriteOptions;

/**
 * Where each byte of each chunk lives in the log: RocksDB at {@code <data-dir>/index}, key
 * (volumeId, chunkIndex, chunkOffset) big-endian, value (segment, record position, data offset
 * in record, length, sequence). Extents of a chunk never overlap: applying a write trims, splits
 * or removes the extents it covers in the same batch, so a read is a seek to the floor key and
 * a forward scan. Each batch also stores the log position up to which the index is complete
 * (the replay checkpoint), so the log itself is the only journal.
 */
public final class ExtentIndex implements Closeable {
    static final int KEY = 24;
    static final int VALUE = 8 + 8 + 4 + 4 + 8;
    private static final byte[] CHECKPOINT_KEY = "checkpoint".getBytes(StandardCharsets.US_ASCII);

    static {
        RocksDB.loadLibrary();
    }

    /** A write to index: its chunk range and where its record is. */
    public record IndexedWrite(ChunkId chunk, long offset, int length, long sequence, long segment, long recordPosition) {
    }

    private final DBOptions dbOptions;
    private final ColumnFamilyOptions cfOptions;
    private final RocksDB db;
    private final ColumnFamilyHandle extents;
    private final ColumnFamilyHandle meta;
    private final WriteOptions writeOptions = new WriteOptions();

    private ExtentIndex(DBOptions dbOptions, ColumnFamilyOptions cfOptions, RocksDB db, ColumnFamilyHandle extents, ColumnFamilyHandle meta) {
        this.dbOptions = dbOptions;
        this.cfOptions = cfOptions;
        this.db = db;
        this.extents = extents;
        this.meta = meta;
    }

    public static ExtentIndex open(Path dir) throws IOException {
        Files.createDirectories(dir);
        DBOptions dbo = new DBOptions().setCreateIfMissing(true).setCreateMissingColumnFamilies(true);
        ColumnFamilyOptions cfo = new ColumnFamilyOptions();
        List<ColumnFamilyDescriptor> cfs = List.of(
                new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, cfo),
                new ColumnFamilyDescriptor("meta".getBytes(StandardCharsets.US_ASCII), cfo));
        List<ColumnFamilyHandle> handles = new ArrayList<>();
        try {
            RocksDB db = RocksDB.open(dbo, dir.toString(), cfs, handles);
            return new ExtentIndex(dbo, cfo, db, handles.get(0), handles.get(1));
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
                .putInt(e.length()).putLong(e.sequence()).array();
    }

    private static Extent extent(byte[] key, byte[] value) {
        ByteBuffer v = ByteBuffer.wrap(value);
        long off = ByteBuffer.wrap(key).getLong(16);
        return new Extent(off, v.getLong(), v.getLong(), v.getInt(), v.getInt(), v.getLong());
    }

    /** The log position up to which every record is in the index, or null for a fresh index. */
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
     * Applies writes in log order (later wins) and the new checkpoint in one atomic batch.
     * Returns, per segment, the bytes of older extents these writes made dead (live-byte accounting for the cleaner).
     */
    public Map<Long, Long> apply(List<IndexedWrite> writes, LogPosition checkpoint) throws IOException {
        Map<Long, Long> dead = new HashMap<>();
        try (WriteBatchWithIndex batch = new WriteBatchWithIndex(true);
             ReadOptions ro = new ReadOptions()) {
            for (IndexedWrite w : writes) {
                if (w.length() == 0) {
                    continue;
                }
                long start = w.offset();
                long end = start + w.length();
                List<Extent> overlapping = new ArrayList<>();
                // The iterator must see this batch's own earlier writes: a base+delta iterator does.
                try (RocksIterator base = db.newIterator(extents, ro);
                     RocksIterator it = batch.newIteratorWithBase(extents, base, ro)) {
                    collectOverlapping(it, w.chunk(), start, end, overlapping);
                }
                for (Extent e : overlapping) {
                    batch.delete(extents, key(w.chunk(), e.chunkOffset()));
                    long keptLeft = Math.max(0, start - e.chunkOffset());
                    long keptRight = Math.max(0, e.end() - end);
                    dead.merge(e.segment(), e.length() - keptLeft - keptRight, Long::sum);
                    if (keptLeft > 0) {
                        batch.put(extents, key(w.chunk(), e.chunkOffset()), value(new Extent(e.chunkOffset(), e.segment(),
                                e.recordPosition(), e.dataOffset(), (int) keptLeft, e.sequence())));
                    }
                    if (keptRight > 0) {
                        int skip = (int) (end - e.chunkOffset());
                        batch.put(extents, key(w.chunk(), end), value(new Extent(end, e.segment(), e.recordPosition(),
                                e.dataOffset() + skip, (int) keptRight, e.sequence())));
                    }
                }
                batch.put(extents, key(w.chunk(), start),
                        value(new Extent(start, w.segment(), w.recordPosition(), 0, w.length(), w.sequence())));
            }
            batch.put(meta, CHECKPOINT_KEY, ByteBuffer.allocate(16).putLong(checkpoint.segment())
                    .putLong(checkpoint.position()).array());
            db.write(writeOptions, batch);
            return dead;
        } catch (RocksDBException e) {
            throw new IOException("index update failed: " + e.getMessage(), e);
        }
    }

    /** The extents of {@code chunk} overlapping {@code [start, end)}, in offset order (unclipped). */
    public List<Extent> find(ChunkId chunk, long start, long end) throws IOException {
        List<Extent> out = new ArrayList<>();
        try (ReadOptions ro = new ReadOptions(); RocksIterator it = db.newIterator(extents, ro)) {
            collectOverlapping(it, chunk, start, end, out);
            it.status();
        } catch (RocksDBException e) {
            throw new IOException("index read failed: " + e.getMessage(), e);
        }
        return out;
    }

    private static void collectOverlapping(RocksIterator it, ChunkId chunk, long start, long end, List<Extent> out) {
        byte[] startKey = key(chunk, start);
        it.seekForPrev(startKey);
        if (!it.isValid() || !sameChunk(it.key(), startKey)) {
            it.seek(startKey);
        }
        for (; it.isValid(); it.next()) {
            byte[] k = it.key();
            if (!sameChunk(k, startKey)) {
                break;
            }
            Extent e = extent(k, it.value());
            if (e.chunkOffset() >= end) {
                break;
            }
            if (e.end() > start) {
                out.add(e);
            }
        }
    }

    /** Live bytes per segment, computed by a full scan (the cleaner's starting point; not on any hot path). */
    public Map<Long, Long> liveBytesBySegment() {
        Map<Long, Long> live = new HashMap<>();
        try (RocksIterator it = db.newIterator(extents)) {
            for (it.seekToFirst(); it.isValid(); it.next()) {
                Extent e = extent(it.key(), it.value());
                live.merge(e.segment(), (long) e.length(), Long::sum);
            }
        }
        return live;
    }

    @Override
    public void close() {
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
