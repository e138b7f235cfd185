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
 */
public final class GroupChunks implements Closeable {
    private static final Pattern FILE = Pattern.compile("group-(\\d+)\\.chunks");

    private final Path dir;
    private final Map<Integer, Set<ChunkId>> known = new ConcurrentHashMap<>();
    private final Map<Integer, FileChannel> files = new ConcurrentHashMap<>();
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
            }
        }
    }

    private void load(int groupId, Path file) throws IOException {
        byte[] bytes = Files.readAllBytes(file);
        ByteBuffer b = ByteBuffer.wrap(bytes);
        Set<ChunkId> set = set(groupId);
        while (b.remaining() >= 16) {
            set.add(new ChunkId(b.getLong(), b.getLong()));
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
                ByteBuffer b = ByteBuffer.allocate(16).putLong(chunk.volumeId()).putLong(chunk.index()).flip();
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
        for (FileChannel ch : files.values()) {
            try {
                ch.close();
            } catch (IOException ignored) {
                // shutting down
            }
        }
    }
}
