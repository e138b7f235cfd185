package io.fastblock.storage.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** {@link FileIo} on a {@link FileChannel}: what production runs. */
public final class RealFileIo implements FileIo {
    static final FileIoFactory FACTORY = new FileIoFactory() {
        @Override
        public FileIo open(Path file, boolean create) throws IOException {
            FileChannel ch = create
                    ? FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE)
                    : FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
            return new RealFileIo(file, ch);
        }

        @Override
        public FileIo openDirect(Path file) throws IOException {
            return direct(file, StandardOpenOption.WRITE);
        }

        @Override
        public FileIo openDirectReads(Path file) throws IOException {
            return direct(file, StandardOpenOption.READ);
        }

        @Override
        public FileIo openNoReadahead(Path file) throws IOException {
            return NoReadaheadFileIo.open(file);
        }

        private FileIo direct(Path file, StandardOpenOption mode) throws IOException {
            FileChannel ch;
            try {
                ch = FileChannel.open(file, mode, com.sun.nio.file.ExtendedOpenOption.DIRECT);
            } catch (UnsupportedOperationException e) {
                return null; // no O_DIRECT in this JDK or on this platform
            } catch (java.nio.file.NoSuchFileException e) {
                throw e;
            } catch (IOException e) {
                return null; // EINVAL: the filesystem (tmpfs, some FUSE ones) has no O_DIRECT
            }
            try {
                // The JDK checks direct reads and writes against the filesystem's block size (statvfs f_frsize).
                int alignment = (int) java.nio.file.Files.getFileStore(file).getBlockSize();
                if (alignment < 1 || Integer.bitCount(alignment) != 1) {
                    ch.close();
                    return null;
                }
                return new RealFileIo(file, ch, alignment);
            } catch (IOException | RuntimeException e) {
                ch.close();
                return null;
            }
        }

        @Override
        public void syncDirectory(Path dir) throws IOException {
            // Opening a directory read-only and forcing it is how Linux fsyncs a directory from Java.
            try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
                d.force(true);
            }
        }

        @Override
        public String toString() {
            return "real files";
        }
    };

    private final Path path;
    private final FileChannel channel;
    private final int alignment;

    private RealFileIo(Path path, FileChannel channel) {
        this(path, channel, 1);
    }

    private RealFileIo(Path path, FileChannel channel, int alignment) {
        this.path = path;
        this.channel = channel;
        this.alignment = alignment;
    }

    @Override
    public int writeAlignment() {
        return alignment;
    }

    @Override
    public Path path() {
        return path;
    }

    @Override
    public ByteBuffer mapReadOnly(long size) throws IOException {
        return channel.map(FileChannel.MapMode.READ_ONLY, 0, size);
    }

    @Override
    public int read(ByteBuffer dst, long position) throws IOException {
        return channel.read(dst, position);
    }

    @Override
    public int write(ByteBuffer src, long position) throws IOException {
        return channel.write(src, position);
    }

    /**
     * One {@code writev} at the channel's position for as many buffers as the kernel takes per
     * call. The position is only used here (every other access is positional), under this lock.
     */
    @Override
    public void writeFully(ByteBuffer[] srcs, long position) throws IOException {
        if (srcs.length == 1) {
            writeFully(srcs[0], position);
            return;
        }
        synchronized (gather) {
            long at = position;
            int first = 0;
            while (first < srcs.length) {
                if (!srcs[first].hasRemaining()) {
                    first++;
                    continue;
                }
                channel.position(at);
                at += channel.write(srcs, first, srcs.length - first);
            }
        }
    }

    private final Object gather = new Object();

    /** Large ranges become holes (their blocks return to the filesystem); small ones, or without fallocate, zeros. */
    @Override
    public void zeroRange(long position, long length) throws IOException {
        long end = Math.min(position + length, channel.size());
        if (end <= position) {
            return;
        }
        if (end - position < HolePunch.MIN_BYTES || !HolePunch.punch(path, position, end - position)) {
            FileIo.super.zeroRange(position, end - position);
        }
    }

    @Override
    public void force(boolean metadata) throws IOException {
        channel.force(metadata);
    }

    @Override
    public long size() throws IOException {
        return channel.size();
    }

    @Override
    public void truncate(long size) throws IOException {
        channel.truncate(size);
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }

    @Override
    public String toString() {
        return path.toString();
    }
}
