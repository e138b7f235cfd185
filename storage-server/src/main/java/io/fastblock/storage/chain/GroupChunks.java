package io.fastblock.storage.chain;

import io.fastblock.protocol.ChunkId;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Which chunks this node holds for each replication group, so a tail can list them for a joining
 * node (chunk files and log records do not name their group). Kept in
 * {@code <data>/chain/group-<id>.chunks}, 16 bytes (volume id, chunk index) appended and fsynced
 * the first time a chunk is seen in a group; that happens once per chunk, off the request threads.
 * A torn last entry (crash during an append) is ignored on load.
 *
 * <p>It also keeps an upper bound of each chunk's written length ({@link #bound}): a tail's log
 * may reach beyond its chunk file, and a joining node must copy that far. The exact high-water
 * mark is kept in memory; on disk ({@code group-<id>.bounds}, 24-byte entries) it is rounded up
 * to {@link #BOUND_STEP}, so a chunk growing sequentially costs one fsync per step, not per write.
 */
public final class GroupChunks implements Closeable {
    private static final Pattern FILE = Pattern.compile("group-(\\d+)\\.chunks");

    private final Path dir;
    private final Map<Integer, Set<ChunkId>> known = new ConcurrentHashMap<>();
    private final Map<Integer, FileChannel> files = new ConcurrentHashMap<>();
    public static final long BOUND_STEP = 16L << 20;
    private static final Pattern BOUNDS = Pattern.compile("group-(\\d+)\\.bounds");
    /** Exact written end per chunk seen since start, and the bound persisted so far. */
    private final Map<ChunkId, Long> highWater = new ConcurrentHashMap<>();
    private final Map<ChunkId, Long> persistedBound = new ConcurrentHashMap<>();
    private final Map<Integer, FileChannel> boundFiles = new ConcurrentHashMap<>();
    private final ExecutorService writer = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "group-chunks");
        t.setDaemon(true);
        return t;
    });

    public GroupChunks(Path dataDir) throws IOException {
        this.dir = dataDir.resolve("chain");
        Files.createDirectories(dir);
        try (var listing = Files.list(dir)) {
            for (Path p : listing.toList()) {
                Matcher m = FILE.matcher(p.getFileName().toString());
                if (m.matches()) {
                    load(Integer.parseInt(m.group(1)), p);
                }
                if (BOUNDS.matcher(p.getFileName().toString()).matches()) {
                    ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(p));
                    while (b.remaining() >= 24) {
                        persistedBound.merge(new ChunkId(b.getLong(), b.getLong()), b.getLong(), Math::max);
                    }
                }
            }
        }
    }

    private void load(int groupId, Path file) throws IOException {
        byte[] bytes = Files.readAllBytes(file);
        ByteBuffer b = ByteBuffer.wrap(bytes);
        Set<ChunkId> set = set(groupId);
        while (b.remaining() >= 16) {
            long volume = b.getLong();
            long index = b.getLong();
            // A negative volume id is a removal (~volumeId) written when a trim dropped the whole chunk.
            if (volume < 0) {
                set.remove(new ChunkId(~volume, index));
            } else {
                set.add(new ChunkId(volume, index));
            }
        }
    }

    private Set<ChunkId> set(int groupId) {
        return known.computeIfAbsent(groupId, g -> ConcurrentHashMap.newKeySet());
    }

    /** Records that this node holds {@code chunk} for the group; completes once that is on disk. */
    public CompletableFuture<Void> add(int groupId, ChunkId chunk) {
        if (!set(groupId).add(chunk)) {
            return CompletableFuture.completedFuture(null);
        }
        return append(groupId, chunk, chunk.volumeId());
    }

    /**
     * Records that this node no longer holds {@code chunk} for the group (a trim of the whole
     * chunk); completes once that is on disk. A later write adds it again.
     */
    public CompletableFuture<Void> remove(int groupId, ChunkId chunk) {
        highWater.remove(chunk);
        if (!set(groupId).remove(chunk)) {
            return CompletableFuture.completedFuture(null);
        }
        return append(groupId, chunk, ~chunk.volumeId());
    }

    private CompletableFuture<Void> append(int groupId, ChunkId chunk, long volumeField) {
        return CompletableFuture.runAsync(() -> {
            try {
                FileChannel ch = files.computeIfAbsent(groupId, g -> {
                    try {
                        return FileChannel.open(dir.resolve("group-" + g + ".chunks"), StandardOpenOption.CREATE,
                                StandardOpenOption.WRITE, StandardOpenOption.APPEND);
                    } catch (IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                });
                // Cut a torn entry so the append starts on an entry boundary.
                long size = ch.size();
                if (size % 16 != 0) {
                    ch.truncate(size - size % 16);
                }
                ByteBuffer b = ByteBuffer.allocate(16).putLong(volumeField).putLong(chunk.index()).flip();
                while (b.hasRemaining()) {
                    ch.write(b);
                }
                ch.force(false);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException("cannot record chunk " + chunk + " of group " + groupId, e);
            }
        }, writer);
    }

    /** The group this node holds {@code chunk} for, or -1 (for integrity repair and resync, whose chunk files do not name it). */
    public int groupOf(ChunkId chunk) {
        for (Map.Entry<Integer, Set<ChunkId>> e : known.entrySet()) {
            if (e.getValue().contains(chunk)) {
                return e.getKey();
            }
        }
        return -1;
    }

    /**
     * Records that bytes up to {@code end} of the chunk were written (or copied) for the group.
     * Completes at once unless the on-disk bound has to grow, then once that is on disk.
     */
    public CompletableFuture<Void> extend(int groupId, ChunkId chunk, long end) {
        highWater.merge(chunk, end, Math::max);
        Long persisted = persistedBound.get(chunk);
        if (persisted != null && persisted >= end) {
            return CompletableFuture.completedFuture(null);
        }
        long bound = (end + BOUND_STEP - 1) / BOUND_STEP * BOUND_STEP;
        Long before = persistedBound.merge(chunk, bound, Math::max);
        if (before != bound) {
            return CompletableFuture.completedFuture(null); // another write raised it further meanwhile
        }
        return CompletableFuture.runAsync(() -> {
            try {
                FileChannel ch = boundFiles.computeIfAbsent(groupId, g -> {
                    try {
                        return FileChannel.open(dir.resolve("group-" + g + ".bounds"), StandardOpenOption.CREATE,
                                StandardOpenOption.WRITE, StandardOpenOption.APPEND);
                    } catch (IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                });
                long size = ch.size();
                if (size % 24 != 0) {
                    ch.truncate(size - size % 24);
                }
                ByteBuffer b = ByteBuffer.allocate(24).putLong(chunk.volumeId()).putLong(chunk.index()).putLong(bound).flip();
                while (b.hasRemaining()) {
                    ch.write(b);
                }
                ch.force(false);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException("cannot record the length bound of chunk " + chunk, e);
            }
        }, writer);
    }

    /** An upper bound of the bytes written to the chunk on this node: exact since start, else the persisted bound, else 0. */
    public long bound(ChunkId chunk) {
        Long exact = highWater.get(chunk);
        if (exact != null) {
            return exact;
        }
        return persistedBound.getOrDefault(chunk, 0L);
    }

    public boolean contains(int groupId, ChunkId chunk) {
        Set<ChunkId> set = known.get(groupId);
        return set != null && set.contains(chunk);
    }

    public List<ChunkId> of(int groupId) {
        Set<ChunkId> set = known.get(groupId);
        return set == null ? List.of() : List.copyOf(set);
    }

    @Override
    public void close() {
        writer.shutdown();
        try {
            writer.awaitTermination(10, java.util.concurrent.TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (FileChannel ch : boundFiles.values()) {
            try {
                ch.close();
            } catch (IOException ignored) {
                // shutting down
            }
        }
        for (FileChannel ch : files.values()) {
            try {
                ch.close();
            } catch (IOException ignored) {
                // shutting down
            }
        }
    }
}
