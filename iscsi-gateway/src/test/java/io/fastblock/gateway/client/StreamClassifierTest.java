package io.fastblock.gateway.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Random;
import org.junit.jupiter.api.Test;

class StreamClassifierTest {
    private static final int IO = 4096;

    @Test
    void newStreamStartsRandomAndBecomesSequentialAfterTwoContinuations() {
        StreamClassifier c = new StreamClassifier(8, 0, 2);
        assertEquals(AccessPattern.RANDOM, c.classify(0, IO));
        assertEquals(AccessPattern.RANDOM, c.classify(IO, IO));
        assertEquals(AccessPattern.SEQUENTIAL, c.classify(2 * IO, IO));
        assertEquals(AccessPattern.SEQUENTIAL, c.classify(3 * IO, IO));
    }

    @Test
    void smallGapContinuesAStreamButALargerOneDoesNot() {
        StreamClassifier c = new StreamClassifier(8, 8192, 2);
        c.classify(0, IO);
        c.classify(IO + 8192, IO); // gap exactly the limit
        assertEquals(AccessPattern.SEQUENTIAL, c.classify(2 * IO + 8192 + 100, IO));
        StreamClassifier d = new StreamClassifier(8, 8192, 2);
        d.classify(0, IO);
        d.classify(IO + 8193, IO); // one byte too far: a new stream
        assertEquals(AccessPattern.RANDOM, d.classify(2 * IO + 8193, IO));
    }

    @Test
    void goingBackwardsOrRereadingIsNotAContinuation() {
        StreamClassifier c = new StreamClassifier(8, 1 << 20, 1);
        c.classify(1 << 20, IO);
        assertEquals(AccessPattern.RANDOM, c.classify(1 << 20, IO), "same offset again");
        assertEquals(AccessPattern.RANDOM, c.classify((1 << 20) - IO, IO), "backwards");
    }

    @Test
    void interleavedSequentialStreamsStaySequential() {
        StreamClassifier c = StreamClassifier.withDefaults();
        long[] next = {0, 1L << 30, 2L << 30, 3L << 30};
        int sequential = 0;
        for (int round = 0; round < 100; round++) {
            for (int s = 0; s < next.length; s++) {
                AccessPattern p = c.classify(next[s], 65536);
                next[s] += 65536;
                if (round >= 2) {
                    assertEquals(AccessPattern.SEQUENTIAL, p, "stream " + s + " round " + round);
                    sequential++;
                }
            }
        }
        assertEquals(4 * 98, sequential);
    }

    @Test
    void sequentialStreamsSurviveInterleavedRandomNoise() {
        StreamClassifier c = StreamClassifier.withDefaults();
        Random random = new Random(42);
        long[] next = {0, 1L << 30};
        for (int round = 0; round < 200; round++) {
            for (int s = 0; s < next.length; s++) {
                AccessPattern p = c.classify(next[s], 8192);
                next[s] += 8192;
                if (round >= 2) {
                    assertEquals(AccessPattern.SEQUENTIAL, p, "stream " + s + " round " + round);
                }
            }
            // Once the streams are established, more random requests between two turns than there
            // are stream slots; before, few enough that a young stream keeps its slot.
            int noise = round < 3 ? 5 : 20;
            for (int r = 0; r < noise; r++) {
                long off = (4L << 30) + (random.nextLong() & ((1L << 34) - 1)) / IO * IO;
                assertEquals(AccessPattern.RANDOM, c.classify(off, IO));
            }
        }
    }

    @Test
    void randomOffsetsStayRandom() {
        StreamClassifier c = StreamClassifier.withDefaults();
        Random random = new Random(7);
        int sequential = 0;
        for (int i = 0; i < 20_000; i++) {
            long off = (random.nextLong() & ((1L << 40) - 1)) / IO * IO;
            if (c.classify(off, IO) == AccessPattern.SEQUENTIAL) {
                sequential++;
            }
        }
        assertEquals(0, sequential);
        assertEquals(8, c.trackedStreams());
    }

    @Test
    void leastRecentlyUsedStreamIsForgottenBeyondCapacity() {
        StreamClassifier c = new StreamClassifier(2, 0, 1);
        c.classify(0, IO);              // stream A
        c.classify(1 << 20, IO);        // stream B
        c.classify(2 << 20, IO);        // stream C evicts A
        assertEquals(AccessPattern.RANDOM, c.classify(IO, IO), "A was forgotten");
        assertEquals(AccessPattern.SEQUENTIAL, c.classify((2 << 20) + IO, IO), "C is remembered");
    }

    @Test
    void idleSequentialStreamEventuallyLosesItsSlot() {
        StreamClassifier c = new StreamClassifier(2, 0, 1);
        c.classify(0, IO);
        c.classify(IO, IO); // A sequential now
        for (int i = 0; i < 100; i++) {
            c.classify((long) (i + 10) << 20, IO); // random requests rotate through the other slot
        }
        assertEquals(AccessPattern.RANDOM, c.classify(2 * IO, IO), "idle stream was evicted");
    }

    @Test
    void rejectsBadParameters() {
        assertThrows(IllegalArgumentException.class, () -> new StreamClassifier(0, 0, 1));
        assertThrows(IllegalArgumentException.class, () -> new StreamClassifier(1, -1, 1));
        assertThrows(IllegalArgumentException.class, () -> new StreamClassifier(1, 0, 0));
    }
}
