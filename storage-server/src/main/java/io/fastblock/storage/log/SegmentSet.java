package io.fastblock.storage.log;

import java.io.Closeable;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.stream.Stream;

/** The log's segment files, oldest first; the last one is the one appended to. */
final class SegmentSet implements Closeable {
    private final Path dir;
    private final long segmentSize;
    private final ConcurrentSkipListMap<Long, LogSegment> segments = new ConcurrentSkipListMap<>();

    private final io.fastblock.storage.io.FileIoFactory files;

    SegmentSet(Path dir, long segmentSize) throws IOException {
        this(dir, segmentSize, io.fastblock.storage.io.FileIoFactory.real());
    }

    SegmentSet(Path dir, long segmentSize, io.fastblock.storage.io.FileIoFactory files) throws IOException {
        this.dir = dir;
        this.segmentSize = segmentSize;
        this.files = files;
        Files.createDirectories(dir);
        List<Long> numbers = new ArrayList<>();
        try (Stream<Path> listed = Files.list(dir)) {
            listed.map(p -> p.getFileName().toString()).filter(n -> n.matches("\\d+\\.seg"))
                    .forEach(n -> numbers.add(Long.parseLong(n.substring(0, n.length() - 4))));
        }
        for (long n : numbers) {
            segments.put(n, LogSegment.open(dir, n, files));
        }
        if (segments.isEmpty()) {
            segments.put(1L, LogSegment.open(dir, 1, files));
            syncDir();
        }
    }

    List<LogSegment> all() {
        return new ArrayList<>(segments.values());
    }

    LogSegment get(long number) {
        return segments.get(number);
    }

    /** The segment with a reader's reference taken (release it after reading), or null if it is gone. */
    LogSegment acquire(long number) {
        LogSegment s = segments.get(number);
        return s != null && s.retain() ? s : null;
    }

    /** Removes a segment the index no longer reads from; its file goes when the last reader lets go. */
    void retire(long number) throws IOException {
        LogSegment s = segments.remove(number);
        if (s != null) {
            s.retire();
            syncDir();
        }
    }

    /** Bytes of all segment files. */
    long totalBytes() {
        long sum = 0;
        for (LogSegment s : segments.values()) {
            sum += s.size();
        }
        return sum;
    }

    Path dir() {
        return dir;
    }

    LogSegment active() {
        return segments.lastEntry().getValue();
    }

    /** The segment to append a record of {@code recordBytes} to, rolling over when the active one is full. */
    LogSegment forAppend(long recordBytes) throws IOException {
        LogSegment active = active();
        if (active.size() > 0 && active.size() + recordBytes > segmentSize) {
            active.seal();
            LogSegment next = LogSegment.open(dir, active.number() + 1, files);
            segments.put(next.number(), next);
            syncDir();
            return next;
        }
        return active;
    }

    /** Removes every segment after {@code number} (replay found the log ends before them). */
    void dropAfter(long number) throws IOException {
        for (LogSegment s : new ArrayList<>(segments.tailMap(number, false).values())) {
            segments.remove(s.number());
            s.close();
            files.delete(s.path());
        }
        syncDir();
    }

    private void syncDir() throws IOException {
        // A new segment's name must be durable too, or an fsynced record can vanish with its file.
        files.syncDirectory(dir);
    }

    @Override
    public void close() throws IOException {
        for (LogSegment s : segments.values()) {
            s.close();
        }
    }
}
