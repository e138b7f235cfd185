package io.fastblock.gateway.client;

/**
 * Recognises sequential streams among a volume's requests when several run interleaved (e.g. a
 * few readers plus random noise). It remembers up to {@code maxStreams} recent streams by where
 * they ended. A request starting at a stream's end, or at most {@code maxGapBytes} after it,
 * continues that stream; once a stream has {@code sequentialAfter} consecutive continuations its
 * requests are sequential, everything else is random. Established sequential streams are evicted
 * last (unless idle), so a burst of random requests does not make a running stream start over.
 * Thread-safe; one instance per volume and direction, so no lock is shared between volumes.
 */
public final class StreamClassifier {
    private static final class Stream {
        long end;
        int continuations;
        long lastUsed;
    }

    private final int maxStreams;
    private final long maxGapBytes;
    private final int sequentialAfter;
    /** A sequential stream untouched for this many requests loses its protection from eviction. */
    private final long idleAfter;
    /** Most recently used first. */
    private final Stream[] streams;
    private int count;
    private long tick;

    public StreamClassifier(int maxStreams, long maxGapBytes, int sequentialAfter) {
        if (maxStreams < 1) {
            throw new IllegalArgumentException("maxStreams must be >= 1, got " + maxStreams);
        }
        if (maxGapBytes < 0) {
            throw new IllegalArgumentException("maxGapBytes must be >= 0, got " + maxGapBytes);
        }
        if (sequentialAfter < 1) {
            throw new IllegalArgumentException("sequentialAfter must be >= 1, got " + sequentialAfter);
        }
        this.maxStreams = maxStreams;
        this.maxGapBytes = maxGapBytes;
        this.sequentialAfter = sequentialAfter;
        this.idleAfter = 8L * maxStreams;
        this.streams = new Stream[maxStreams];
    }

    /** Defaults: 8 streams, 128 KiB gap, sequential after 2 continuations. */
    public static StreamClassifier withDefaults() {
        return new StreamClassifier(8, 128 * 1024, 2);
    }

    public synchronized AccessPattern classify(long offset, int length) {
        tick++;
        int best = -1;
        long bestGap = Long.MAX_VALUE;
        for (int i = 0; i < count; i++) {
            long gap = offset - streams[i].end;
            if (gap >= 0 && gap <= maxGapBytes && gap < bestGap) {
                best = i;
                bestGap = gap;
            }
        }
        if (best >= 0) {
            Stream s = streams[best];
            s.continuations++;
            s.end = offset + length;
            s.lastUsed = tick;
            moveToFront(best);
            return s.continuations >= sequentialAfter ? AccessPattern.SEQUENTIAL : AccessPattern.RANDOM;
        }
        Stream s;
        if (count < maxStreams) {
            s = new Stream();
            count++;
            streams[count - 1] = s;
            moveToFront(count - 1);
        } else {
            int victim = victim();
            s = streams[victim];
            moveToFront(victim);
        }
        s.end = offset + length;
        s.continuations = 0;
        s.lastUsed = tick;
        return AccessPattern.RANDOM;
    }

    /** Streams currently tracked; for tests. */
    public synchronized int trackedStreams() {
        return count;
    }

    private int victim() {
        for (int i = count - 1; i >= 0; i--) {
            Stream s = streams[i];
            boolean protectedStream = s.continuations >= sequentialAfter && tick - s.lastUsed <= idleAfter;
            if (!protectedStream) {
                return i;
            }
        }
        return count - 1;
    }

    private void moveToFront(int i) {
        Stream s = streams[i];
        System.arraycopy(streams, 0, streams, 1, i);
        streams[0] = s;
    }
}
