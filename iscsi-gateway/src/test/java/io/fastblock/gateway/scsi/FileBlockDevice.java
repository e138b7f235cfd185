package io.fastblock.gateway.scsi;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.BitSet;
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
    /** Thrown by the next {@link #write} call itself instead of failing its future (a buggy device). */
    public volatile RuntimeException throwOnWrite;
    /** When set, reads and writes wait for it before touching the file (a stuck backend). */
    public volatile CountDownLatch hold;
    /** Reads asked of this device so far (counted when asked, before {@link #hold} is waited for). */
    public final java.util.concurrent.atomic.AtomicInteger readsAsked = new java.util.concurrent.atomic.AtomicInteger();
    /** Unmap calls made on this device so far (one per range the SCSI layer sends). */
    public final java.util.concurrent.atomic.AtomicInteger unmapsAsked = new java.util.concurrent.atomic.AtomicInteger();
    private final List<Runnable> lossListeners = new CopyOnWriteArrayList<>();
    /**
     * Thin mode: which 512-byte blocks hold written data. Java cannot punch holes in a file, so an
     * unmap writes zeros and clears the bits; GET LBA STATUS answers from the bitmap. Guarded by
     * itself; touched only on the I/O thread and by readers of the status.
     */
    private final BitSet mapped = new BitSet();
    private volatile boolean thin;

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

    /** Makes this device thin provisioned (before it is handed to the SCSI layer). */
    public FileBlockDevice thin(boolean on) {
        this.thin = on;
        return this;
    }

    @Override
    public boolean thinProvisioned() {
        return thin;
    }

    private void mark(long offset, long length, boolean on) {
        synchronized (mapped) {
            int from = (int) (offset / 512);
            int to = (int) ((offset + length + 511) / 512);
            mapped.set(from, to, on);
        }
    }

    @Override
    public CompletableFuture<Void> unmap(long offset, long length) {
        if (!thin) {
            return BlockDevice.super.unmap(offset, length);
        }
        unmapsAsked.incrementAndGet();
        return CompletableFuture.runAsync(() -> {
            try {
                check();
                ByteBuffer zeros = ByteBuffer.allocate((int) Math.min(length, 1 << 20));
                long done = 0;
                while (done < length) {
                    zeros.clear().limit((int) Math.min(zeros.capacity(), length - done));
                    done += file.write(zeros, offset + done);
                }
                file.force(false);
                mark(offset, length, false);
            } catch (IOException e) {
                throw new DeviceException(DeviceException.Reason.IO_ERROR, e.getMessage(), e);
            }
        }, io);
    }

    @Override
    public CompletableFuture<List<Extent>> lbaStatus(long offset, long length) {
        if (!thin) {
            return BlockDevice.super.lbaStatus(offset, length);
        }
        return CompletableFuture.supplyAsync(() -> {
            check();
            List<Extent> out = new ArrayList<>();
            synchronized (mapped) {
                int block = (int) (offset / 512);
                int end = (int) ((offset + length) / 512);
                while (block < end) {
                    boolean m = mapped.get(block);
                    int next = m ? mapped.nextClearBit(block) : mapped.nextSetBit(block);
                    if (next < 0 || next > end) {
                        next = end;
                    }
                    out.add(new Extent(block * 512L, (next - block) * 512L, m));
                    block = next;
                }
            }
            return out;
        }, io);
    }

    /** Bytes of the device that hold written (mapped) data. */
    public long mappedBytes() {
        synchronized (mapped) {
            return mapped.cardinality() * 512L;
        }
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
        readsAsked.incrementAndGet();
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
        RuntimeException thrown = throwOnWrite;
        if (thrown != null) {
            throwOnWrite = null;
            throw thrown;
        }
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
                mark(offset, len, true);
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
