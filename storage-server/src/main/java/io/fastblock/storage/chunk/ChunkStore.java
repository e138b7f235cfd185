package io.fastblock.storage.chunk;

import io.fastblock.protocol.ChunkId;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import io.fastblock.storage.io.FileIo;
import io.fastblock.storage.io.FileIoFactory;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The in-place layout of head and middle replicas: one sparse file per chunk at
 * {@code chunks/<volumeId>/<chunkIndex>}, written positionally without fsync (the tail's log is
 * the durable copy). Holes and bytes past the end of a file read as zeros.
 * All file work runs on this store's own threads, never on a Netty event loop.
 */
public final class ChunkStore implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(ChunkStore.class);

    private final Path root;
    private final FileIoFactory files;
    private final ConcurrentHashMap<ChunkId, FileIo> open = new ConcurrentHashMap<>();
    /** Single-threaded stripes: all work on one chunk runs in submission order, so replicas apply overlapping writes in chain order. */
    private final ExecutorService[] stripes;
    private volatile boolean closed;

    public ChunkStore(Path dataDir, int ioThreads) throws IOException {
        this(dataDir, ioThreads, FileIoFactory.real());
    }

    /** A store whose files are opened through {@code files} (a fault-injecting factory in power-loss tests). */
    public ChunkStore(Path dataDir, int ioThreads, FileIoFactory files) throws IOException {
        this.root = dataDir.resolve("chunks");
        this.files = files;
        Files.createDirectories(root);
        AtomicInteger n = new AtomicInteger();
        this.stripes = new ExecutorService[ioThreads];
        for (int i = 0; i < ioThreads; i++) {
            stripes[i] = Executors.newSingleThreadExecutor(r -> {
                Thread t = new Thread(r, "chunk-io-" + n.incrementAndGet());
                t.setDaemon(true);
                return t;
            });
        }
    }

    private ExecutorService stripe(ChunkId chunk) {
        return stripes[Math.floorMod(chunk.hashCode(), stripes.length)];
    }

    public Path fileOf(ChunkId chunk) {
        return root.resolve(Long.toString(chunk.volumeId())).resolve(Long.toString(chunk.index()));
    }

    /** Writes {@code data} at {@code offset}; takes ownership of {@code data}. */
    public CompletableFuture<Void> writeAsync(ChunkId chunk, long offset, ByteBuf data) {
        try {
            return CompletableFuture.runAsync(() -> {
                try {
                    write(chunk, offset, data);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                } finally {
                    data.release();
                }
            }, stripe(chunk));
        } catch (RuntimeException rejected) {
            data.release();
            return CompletableFuture.failedFuture(rejected);
        }
    }

    /** Reads {@code length} bytes; the caller owns the returned buffer. */
    public CompletableFuture<ByteBuf> readAsync(ChunkId chunk, long offset, int length, ByteBufAllocator alloc) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return read(chunk, offset, length, alloc);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, stripe(chunk));
    }

    /** Synchronous write on the calling thread; does not release {@code data}. */
    public void write(ChunkId chunk, long offset, ByteBuf data) throws IOException {
        FileIo ch = channel(chunk, true);
        long pos = offset;
        for (ByteBuffer b : data.nioBuffers(data.readerIndex(), data.readableBytes())) {
            while (b.hasRemaining()) {
                pos += ch.write(b, pos);
            }
        }
    }

    /** Synchronous read on the calling thread. */
    public ByteBuf read(ChunkId chunk, long offset, int length, ByteBufAllocator alloc) throws IOException {
        ByteBuf out = alloc.directBuffer(length, length);
        try {
            FileIo ch = channel(chunk, false);
            int filled = 0;
            if (ch != null) {
                ByteBuffer target = out.nioBuffer(0, length);
                while (target.hasRemaining()) {
                    int r = ch.read(target, offset + target.position());
                    if (r < 0) {
                        break;
                    }
                }
                filled = target.position();
            }
            // Pooled buffers hold old bytes: past the end of the file must be zeros explicitly.
            out.setZero(filled, length - filled);
            out.writerIndex(length);
            return out;
        } catch (IOException | RuntimeException e) {
            out.release();
            throw e;
        }
    }

    private FileIo channel(ChunkId chunk, boolean create) throws IOException {
        if (closed) {
            throw new IOException("chunk store is closed");
        }
        FileIo ch = open.get(chunk);
        if (ch != null) {
            return ch;
        }
        Path file = fileOf(chunk);
        if (!create && !Files.exists(file)) {
            return null;
        }
        try {
            return open.computeIfAbsent(chunk, c -> {
                try {
                    Files.createDirectories(file.getParent());
                    return files.open(file, true);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    /** Flushes every open chunk file: used on clean shutdown so a restart finds head/middle data intact. */
    public void flushAll() {
        for (var e : open.entrySet()) {
            try {
                e.getValue().force(false);
            } catch (IOException ex) {
                LOG.warn("flush of chunk {} failed: {}", e.getKey(), ex.toString());
            }
        }
    }

    @Override
    public void close() {
        for (ExecutorService s : stripes) {
            s.shutdown();
        }
        try {
            for (ExecutorService s : stripes) {
                s.awaitTermination(30, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        flushAll();
        closed = true;
        for (FileIo ch : open.values()) {
            try {
                ch.close();
            } catch (IOException ignored) {
                // closing on shutdown: nothing more to do
            }
        }
        open.clear();
    }
}
