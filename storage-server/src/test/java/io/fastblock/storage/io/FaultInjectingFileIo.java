package io.fastblock.storage.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * A {@link FileIo} over real files that remembers what a power loss would take away. Writes go
 * to the file at once (so this process, and a process that restarts after a crash, sees them),
 * and each write first saves the bytes it overwrites in an undo list that {@link #force} clears.
 * {@link Factory#powerLoss} rolls every file back to its last forced state, optionally keeps a
 * sector-aligned prefix of the very last write (a torn write), and deletes files whose
 * directory entry was never synced. From then on the old handles fail, as a dead machine's would.
 */
public final class FaultInjectingFileIo implements FileIo {
    public static final int SECTOR = 512;
    /** The block size of handles from {@link Factory#openDirect}: their writes must be whole blocks. */
    public static final int DIRECT_BLOCK = 4096;

    /** What happens to the last write before a power loss. */
    public enum Tear {
        /** Dropped with every other unforced write. */
        NONE,
        /** A prefix ending at a sector boundary inside the write survives, the rest is lost. */
        LAST_WRITE
    }

    private record Undo(long position, byte[] oldBytes, long oldSize) {
    }

    private record LastWrite(Path file, long position, byte[] data) {
    }

    /** Unforced history of one path, shared by every handle open on it. */
    private static final class FileState {
        final List<Undo> undo = new ArrayList<>();
    }

    /** Opens fault-injecting files; one instance stands for one machine's disk. */
    public static final class Factory implements FileIoFactory {
        private final Map<Path, FileState> files = new HashMap<>();
        /** Files created since their directory was last synced: a power loss removes them. */
        private final Set<Path> unsyncedNames = new HashSet<>();
        private final List<FaultInjectingFileIo> open = new ArrayList<>();
        private final Random random;
        private LastWrite last;
        private boolean down;
        private int powerLosses;
        private long forces;

        private int lastLogWritesDropped;

        /** Unforced writes to log segments ({@code *.seg}) the last power loss took away. */
        public synchronized int lastLogWritesDropped() {
            return lastLogWritesDropped;
        }

        public Factory(long seed) {
            this.random = new Random(seed);
        }

        @Override
        public synchronized FileIo open(Path file, boolean create) throws IOException {
            checkUp();
            Path p = file.toAbsolutePath().normalize();
            boolean existed = Files.exists(p);
            FileChannel ch = create
                    ? FileChannel.open(p, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE)
                    : FileChannel.open(p, StandardOpenOption.READ, StandardOpenOption.WRITE);
            if (!existed) {
                unsyncedNames.add(p);
            }
            FaultInjectingFileIo io = new FaultInjectingFileIo(this, p, ch, files.computeIfAbsent(p, k -> new FileState()), 1);
            open.add(io);
            return io;
        }

        /**
         * A handle standing for an O_DIRECT one: its writes must be whole {@link #DIRECT_BLOCK}s (as the
         * kernel's EINVAL, an IOException otherwise) and share the file's unforced history with every
         * other handle, so a power loss drops them unless some handle forced the file after them.
         */
        @Override
        public synchronized FileIo openDirect(Path file) throws IOException {
            checkUp();
            Path p = file.toAbsolutePath().normalize();
            // Readable although a direct handle is not: the undo list keeps the bytes each write replaces.
            FileChannel ch = FileChannel.open(p, StandardOpenOption.READ, StandardOpenOption.WRITE);
            FaultInjectingFileIo io = new FaultInjectingFileIo(this, p, ch, files.computeIfAbsent(p, k -> new FileState()),
                    DIRECT_BLOCK);
            open.add(io);
            directOpens++;
            return io;
        }

        private int directOpens;

        /** Handles opened by {@link #openDirect} so far. */
        public synchronized int directOpens() {
            return directOpens;
        }

        /** The file and its unforced history go: a file created later under the name starts afresh. */
        @Override
        public synchronized boolean delete(Path file) throws IOException {
            checkUp();
            Path p = file.toAbsolutePath().normalize();
            files.remove(p);
            unsyncedNames.remove(p);
            return Files.deleteIfExists(p);
        }

        /**
         * The renamed file's history moves with it and the replaced file's goes. Simplification: the
         * rename itself is taken as durable at once (callers force the source and sync the directory
         * right after, so only that short window is not modelled).
         */
        @Override
        public synchronized void rename(Path from, Path to) throws IOException {
            checkUp();
            Path f = from.toAbsolutePath().normalize();
            Path t = to.toAbsolutePath().normalize();
            FileIoFactory.super.rename(f, t);
            FileState moved = files.remove(f);
            files.remove(t);
            if (moved != null) {
                files.put(t, moved);
            }
            unsyncedNames.remove(f);
        }

        @Override
        public synchronized void syncDirectory(Path dir) throws IOException {
            checkUp();
            Path d = dir.toAbsolutePath().normalize();
            unsyncedNames.removeIf(p -> d.equals(p.getParent()));
            FileIoFactory.real().syncDirectory(dir);
        }

        private void checkUp() throws IOException {
            if (down) {
                throw new IOException("power lost");
            }
        }

        /** A new boot after every power loss; the same boot across process restarts in between. */
        @Override
        public synchronized String bootId() {
            return "fault-injecting-" + System.identityHashCode(this) + "-boot-" + powerLosses;
        }

        /** Number of {@link FileIo#force} calls so far (a test can check that a path does not fsync). */
        public synchronized long forces() {
            return forces;
        }

        /**
         * The machine loses power: every handle fails from now on, each file returns to its last
         * forced content (and size), files never made durable in their directory disappear, and
         * with {@link Tear#LAST_WRITE} the last write keeps a random sector-aligned prefix.
         * Returns a description of what was dropped, for test logs.
         */
        public synchronized String powerLoss(Tear tear) throws IOException {
            down = true;
            powerLosses++;
            for (FaultInjectingFileIo io : open) {
                io.fence();
            }
            open.clear();
            int undone = 0;
            int undoneInLog = 0;
            for (var e : files.entrySet()) {
                List<Undo> undo = e.getValue().undo;
                if (undo.isEmpty() || !Files.exists(e.getKey())) {
                    undo.clear();
                    continue;
                }
                try (FileChannel ch = FileChannel.open(e.getKey(), StandardOpenOption.WRITE)) {
                    for (int i = undo.size() - 1; i >= 0; i--) {
                        Undo u = undo.get(i);
                        writeAll(ch, ByteBuffer.wrap(u.oldBytes), u.position);
                        if (ch.size() > u.oldSize) {
                            ch.truncate(u.oldSize);
                        }
                        undone++;
                        if (e.getKey().getFileName().toString().endsWith(".seg")) {
                            undoneInLog++;
                        }
                    }
                    if (tear == Tear.LAST_WRITE && last != null && last.file.equals(e.getKey())) {
                        int keep = tornPrefix(last.position, last.data.length);
                        if (keep > 0) {
                            writeAll(ch, ByteBuffer.wrap(last.data, 0, keep), last.position);
                        }
                    }
                    ch.force(true);
                }
                undo.clear();
            }
            int removed = 0;
            for (Path p : unsyncedNames) {
                if (Files.deleteIfExists(p)) {
                    removed++;
                }
                files.remove(p);
            }
            unsyncedNames.clear();
            last = null;
            lastLogWritesDropped = undoneInLog;
            return undone + " unforced writes dropped (" + undoneInLog + " in log segments), " + removed
                    + " unsynced files removed";
        }

        /**
         * The process dies (kill -9) but the machine keeps running: every handle fails from now
         * on, and everything written stays (it is in the page cache). {@link #powerOn} lets the
         * restarted process open files again, in the same boot.
         */
        public synchronized void processCrash() {
            down = true;
            for (FaultInjectingFileIo io : open) {
                io.fence();
            }
            open.clear();
        }

        /** A sector boundary strictly inside the write, chosen at random; 0 if the write fits in one sector. */
        private int tornPrefix(long position, int length) {
            long first = (position / SECTOR + 1) * SECTOR;
            List<Integer> cuts = new ArrayList<>();
            for (long b = first; b < position + length; b += SECTOR) {
                cuts.add((int) (b - position));
            }
            return cuts.isEmpty() ? 0 : cuts.get(random.nextInt(cuts.size()));
        }

        /** Power returns: files can be opened again (by the restarted node). */
        private String armedSuffix;
        private Tear armedTear;
        private String armedResult;

        /**
         * Arms a power loss that strikes at the next {@link FileIo#force} of a file whose name ends
         * with {@code suffix}, before that force reaches the disk: exactly the writes it was about to
         * make durable are lost (the log's group commit in flight, for {@code ".seg"}).
         */
        public synchronized void powerLossAtNextForceOf(String suffix, Tear tear) {
            armedSuffix = suffix;
            armedTear = tear;
            armedResult = null;
        }

        /** What the armed power loss dropped, or null while it has not struck. */
        public synchronized String armedPowerLossResult() {
            return armedResult;
        }

        /** Called under the factory's lock by a force: strikes the armed power loss if it matches. */
        boolean strikeArmed(Path file) throws IOException {
            if (armedSuffix == null || !file.getFileName().toString().endsWith(armedSuffix)) {
                return false;
            }
            armedSuffix = null;
            armedResult = powerLoss(armedTear);
            return true;
        }

        public synchronized void powerOn() {
            down = false;
        }

        public synchronized int powerLosses() {
            return powerLosses;
        }

        synchronized void recordWrite(FileState state, Path file, long position, ByteBuffer src, FileChannel ch) throws IOException {
            checkUp();
            long size = ch.size();
            int len = src.remaining();
            byte[] old = new byte[(int) Math.max(0, Math.min(len, size - position))];
            if (old.length > 0) {
                readAll(ch, ByteBuffer.wrap(old), position);
            }
            state.undo.add(new Undo(position, old, size));
            byte[] data = new byte[len];
            src.duplicate().get(data);
            last = new LastWrite(file, position, data);
        }

        synchronized void recordTruncate(FileState state, long newSize, FileChannel ch) throws IOException {
            checkUp();
            long size = ch.size();
            if (newSize >= size) {
                return;
            }
            byte[] old = new byte[(int) (size - newSize)];
            readAll(ch, ByteBuffer.wrap(old), newSize);
            state.undo.add(new Undo(newSize, old, size));
        }

        synchronized void recordForce(FileState state) throws IOException {
            checkUp();
            forces++;
            state.undo.clear();
        }

        synchronized void closed(FaultInjectingFileIo io) {
            open.remove(io);
        }
    }

    private final Factory factory;
    private final Path path;
    private final FileChannel channel;
    private final FileState state;
    private final int alignment;
    private volatile boolean fenced;

    private FaultInjectingFileIo(Factory factory, Path path, FileChannel channel, FileState state, int alignment) {
        this.factory = factory;
        this.path = path;
        this.channel = channel;
        this.state = state;
        this.alignment = alignment;
    }

    @Override
    public int writeAlignment() {
        return alignment;
    }

    private void fence() {
        fenced = true;
    }

    private void check() throws IOException {
        if (fenced) {
            throw new IOException("power lost: " + path);
        }
    }

    @Override
    public Path path() {
        return path;
    }

    @Override
    public int read(ByteBuffer dst, long position) throws IOException {
        check();
        return channel.read(dst, position);
    }

    @Override
    public int write(ByteBuffer src, long position) throws IOException {
        // Record and write under the factory's lock so a power loss sees each write whole or not at all.
        if (position % alignment != 0 || src.remaining() % alignment != 0) {
            throw new IOException("Invalid argument: direct write of " + src.remaining() + " bytes at " + position + " to " + path
                    + " is not in whole blocks of " + alignment);
        }
        synchronized (factory) {
            check();
            factory.recordWrite(state, path, position, src, channel);
            return writeAll(channel, src, position);
        }
    }

    @Override
    public void force(boolean metadata) throws IOException {
        synchronized (factory) {
            check();
            if (factory.strikeArmed(path)) {
                throw new IOException("power lost during fsync of " + path);
            }
            channel.force(metadata);
            factory.recordForce(state);
        }
    }

    @Override
    public long size() throws IOException {
        check();
        return channel.size();
    }

    @Override
    public void truncate(long size) throws IOException {
        synchronized (factory) {
            check();
            factory.recordTruncate(state, size, channel);
            channel.truncate(size);
        }
    }

    @Override
    public void close() throws IOException {
        factory.closed(this);
        channel.close();
    }

    private static int writeAll(FileChannel ch, ByteBuffer src, long position) throws IOException {
        int n = 0;
        while (src.hasRemaining()) {
            n += ch.write(src, position + n);
        }
        return n;
    }

    private static void readAll(FileChannel ch, ByteBuffer dst, long position) throws IOException {
        long at = position;
        while (dst.hasRemaining()) {
            int r = ch.read(dst, at);
            if (r < 0) {
                break;
            }
            at += r;
        }
    }
}
