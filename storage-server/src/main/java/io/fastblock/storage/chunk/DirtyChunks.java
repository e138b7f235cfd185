package io.fastblock.storage.chunk;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.io.FileIo;
import io.fastblock.storage.io.FileIoFactory;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * The durable list of chunks that may hold writes not yet forced to disk, and whether the last
 * shutdown was clean. Head and middle never fsync per write, so after a power loss exactly
 * these chunks must be brought back in line with the tail; everything else was forced at a
 * checkpoint and is trusted.
 *
 * <p>A chunk is recorded (and the record forced) before its first write after a checkpoint
 * reaches the file, since the kernel may write pages back at any moment. Each entry keeps the
 * chunk's group (to find its tail) and the highest sequence known forced for it (the tail's
 * writes above it are the delta to fetch; 0 means fetch everything).
 *
 * <p>Layout: two slot files {@code dirty.0} and {@code dirty.1}; each save writes the whole
 * record into the slot not holding the newest one, so a torn save leaves the previous record
 * readable. Record: magic, generation, clean flag, boot id, count, entries (volume, index, group,
 * forced sequence, end bound), CRC32C of everything before it.
 */
public final class DirtyChunks implements Closeable {
    private static final int MAGIC = 0xFBD1C4C5;
    private static final int ENTRY = 8 + 8 + 4 + 8 + 8;

    /**
     * A chunk that may have unforced writes: its group, the highest sequence forced before them,
     * and a bound on the bytes written ({@code end}: no write reached past it), which a power
     * loss cannot shorten the way it can shorten the file.
     */
    public record Entry(ChunkId chunk, int groupId, long forcedSequence, long end) {
        public Entry(ChunkId chunk, int groupId, long forcedSequence) {
            this(chunk, groupId, forcedSequence, 0);
        }
    }

    /**
     * What the last run left behind, and the machine boot it was written in: an unclean
     * shutdown within the same boot was a process crash (the page cache kept every write), one
     * across boots may have lost unforced writes.
     */
    public record State(boolean clean, List<Entry> dirty, String bootId) {
        public State(boolean clean, List<Entry> dirty) {
            this(clean, dirty, "");
        }
    }

    private final FileIo[] slots = new FileIo[2];
    private final String bootId;
    private long generation;
    private int newest = -1;

    private DirtyChunks(String bootId) {
        this.bootId = bootId;
    }

    /** Opens (creating if needed) the record in {@code dir}; {@link #lastState} tells what the previous run left. */
    public static DirtyChunks open(Path dir, FileIoFactory files) throws IOException {
        return open(dir, files, "dirty");
    }

    /** The same two-slot record under another name ({@code name.0}, {@code name.1}), for another list of chunks. */
    public static DirtyChunks open(Path dir, FileIoFactory files, String name) throws IOException {
        DirtyChunks d = new DirtyChunks(files.bootId());
        try {
            for (int i = 0; i < 2; i++) {
                d.slots[i] = files.open(dir.resolve(name + "." + i), true);
            }
            files.syncDirectory(dir);
        } catch (IOException | RuntimeException e) {
            d.close();
            throw e;
        }
        return d;
    }

    /** The boot this process runs in (what {@link #save} records). */
    public String bootId() {
        return bootId;
    }

    /**
     * The newest valid record. No record at all (a new data directory) reads as a clean
     * shutdown with nothing dirty.
     */
    public State lastState() throws IOException {
        State best = null;
        for (int i = 0; i < 2; i++) {
            Parsed p = parse(slots[i]);
            if (p != null && (newest < 0 || p.generation > generation)) {
                generation = p.generation;
                newest = i;
                best = p.state;
            }
        }
        return best != null ? best : new State(true, List.of());
    }

    private record Parsed(long generation, State state) {
    }

    private static Parsed parse(FileIo slot) throws IOException {
        long size = slot.size();
        if (size < 4 + 8 + 1 + 2 + 4 + 4 || size > (1 << 28)) {
            return null;
        }
        ByteBuffer b = ByteBuffer.allocate((int) size);
        if (!slot.readFully(b, 0)) {
            return null;
        }
        b.flip();
        if (b.getInt() != MAGIC) {
            return null;
        }
        long gen = b.getLong();
        boolean clean = b.get() == 1;
        int bootLength = b.getShort() & 0xFFFF;
        if (bootLength > b.remaining()) {
            return null;
        }
        byte[] boot = new byte[bootLength];
        b.get(boot);
        if (b.remaining() < 4) {
            return null;
        }
        int count = b.getInt();
        if (count < 0 || b.remaining() != (long) count * ENTRY + 4) {
            return null;
        }
        List<Entry> entries = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            entries.add(new Entry(new ChunkId(b.getLong(), b.getLong()), b.getInt(), b.getLong(), b.getLong()));
        }
        int crc = b.getInt();
        CRC32C c = new CRC32C();
        c.update(b.duplicate().position(0).limit(b.limit() - 4));
        return (int) c.getValue() == crc ? new Parsed(gen, new State(clean, entries, new String(boot, java.nio.charset.StandardCharsets.UTF_8))) : null;
    }

    /** Durably replaces the record: forced before it returns. */
    public synchronized void save(boolean clean, Collection<Entry> dirty) throws IOException {
        int target = newest < 0 ? 0 : 1 - newest;
        long gen = generation + 1;
        byte[] boot = bootId.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(4 + 8 + 1 + 2 + boot.length + 4 + dirty.size() * ENTRY + 4);
        b.putInt(MAGIC).putLong(gen).put((byte) (clean ? 1 : 0)).putShort((short) boot.length).put(boot).putInt(dirty.size());
        for (Entry e : dirty) {
            b.putLong(e.chunk().volumeId()).putLong(e.chunk().index()).putInt(e.groupId()).putLong(e.forcedSequence()).putLong(e.end());
        }
        CRC32C c = new CRC32C();
        c.update(b.duplicate().flip());
        b.putInt((int) c.getValue());
        b.flip();
        FileIo slot = slots[target];
        int length = b.remaining();
        slot.writeFully(b, 0);
        slot.truncate(length);
        slot.force(true);
        generation = gen;
        newest = target;
    }

    /** Entries keyed by chunk, for callers that keep the set in a map. */
    public static Map<ChunkId, Entry> byChunk(Collection<Entry> entries) {
        Map<ChunkId, Entry> m = new HashMap<>();
        for (Entry e : entries) {
            m.put(e.chunk(), e);
        }
        return m;
    }

    @Override
    public void close() throws IOException {
        for (FileIo s : slots) {
            if (s != null) {
                s.close();
            }
        }
    }
}
