package io.fastblock.bench;

import io.fastblock.gateway.scsi.BlockDevice;
import io.fastblock.gateway.scsi.DeviceException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/** A {@link BlockDevice} on a real file for the load generator's tests; I/O on its own thread, off the event loop. */
final class FileVolume implements BlockDevice {
    private final FileChannel file;
    private final long size;
    private final String name;
    private final ExecutorService io;

    FileVolume(Path path, long size, String name) throws IOException {
        this.file = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
        if (file.size() < size) {
            file.truncate(size);
            file.write(java.nio.ByteBuffer.allocate(1), size - 1);
        }
        this.size = size;
        this.name = name;
        this.io = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "file-volume-" + name);
            t.setDaemon(true);
            return t;
        });
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
        return name.hashCode() & 0xffffL;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public CompletableFuture<ByteBuf> read(long offset, int length) {
        return CompletableFuture.supplyAsync(() -> {
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
                int len = data.readableBytes();
                int done = 0;
                while (done < len) {
                    done += data.getBytes(data.readerIndex() + done, file, offset + done, len - done);
                }
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
            try {
                file.force(true);
            } catch (IOException e) {
                throw new DeviceException(DeviceException.Reason.IO_ERROR, e.getMessage(), e);
            }
        }, io);
    }

    @Override
    public void close() {
        io.shutdown();
        try {
            file.close();
        } catch (IOException ignored) {
            // closing after a failed test; nothing to recover
        }
    }
}
