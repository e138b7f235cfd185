package io.fastblock.gateway.scsi;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;

/** A test {@link BlockDevice} on a real file; I/O runs on its own thread, writes are forced before completing. */
public final class FileBlockDevice implements BlockDevice {
    private final FileChannel file;
    private final long size;
    private final long id;
    private final String name;
    private final ExecutorService io = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "file-device-io");
        t.setDaemon(true);
        return t;
    });
    private final AtomicBoolean closed = new AtomicBoolean();
    /** When set, every operation fails with this reason (to test sense mapping). */
    public volatile DeviceException.Reason failWith;
    /** When set, reads and writes wait for it before touching the file (a stuck backend). */
    public volatile CountDownLatch hold;
    private final List<Runnable> lossListeners = new CopyOnWriteArrayList<>();

    public FileBlockDevice(Path path, long size, long id, String name) throws IOException {
        this.file = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
        this.file.truncate(size);
        if (this.file.size() < size) {
            this.file.write(java.nio.ByteBuffer.allocate(1), size - 1);
        }
        this.size = size;
        this.id = id;
        this.name = name;
    }

    @Override
    public long sizeBytes() {
        return size;
    }

    @Override
    public int blockSize() {
        return 512;
    }

    @Override
    public long volumeId() {
        return id;
    }

    @Override
    public String name() {
        return name;
    }

    public boolean isClosed() {
        return closed.get();
    }

    private void check() {
        CountDownLatch h = hold;
        if (h != null) {
            try {
                h.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (failWith != null) {
            throw new DeviceException(failWith, "injected " + failWith);
        }
        if (closed.get()) {
            throw new DeviceException(DeviceException.Reason.UNAVAILABLE, "closed");
        }
    }

    @Override
    public CompletableFuture<ByteBuf> read(long offset, int length) {
        return CompletableFuture.supplyAsync(() -> {
            check();
            ByteBuf buf = PooledByteBufAllocator.DEFAULT.directBuffer(length);
            try {
                while (buf.writerIndex() < length) {
                    int n = buf.writeBytes(file, offset + buf.writerIndex(), length - buf.writerIndex());
                    if (n < 0) {
                        buf.writeZero(length - buf.writerIndex());
                    }
                }
                return buf;
            } catch (IOException e) {
                buf.release();
                throw new DeviceException(DeviceException.Reason.IO_ERROR, e.getMessage(), e);
            }
        }, io);
    }

    @Override
    public CompletableFuture<Void> write(long offset, ByteBuf data) {
        data.retain();
        return CompletableFuture.runAsync(() -> {
            try {
                check();
                int len = data.readableBytes();
                int done = 0;
                while (done < len) {
                    done += data.getBytes(data.readerIndex() + done, file, offset + done, len - done);
                }
                file.force(false);
            } catch (IOException e) {
                throw new DeviceException(DeviceException.Reason.IO_ERROR, e.getMessage(), e);
            } finally {
                data.release();
            }
        }, io);
    }

    @Override
    public CompletableFuture<Void> flush() {
        return CompletableFuture.runAsync(() -> {
            check();
            try {
                file.force(true);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, io);
    }

    @Override
    public void whenLost(Runnable action) {
        lossListeners.add(action);
    }

    /** Simulates losing the volume (lease moved, volume deleted). */
    public void lose() {
        lossListeners.forEach(Runnable::run);
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            io.shutdown();
            try {
                file.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
