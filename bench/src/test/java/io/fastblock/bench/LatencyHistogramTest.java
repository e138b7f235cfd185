package io.fastblock.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class LatencyHistogramTest {
    @Test
    void bucketsAreContiguousAndCoverEveryValue() {
        int last = -1;
        for (long v = 0; v < 1 << 20; v++) {
            int i = LatencyHistogram.index(v);
            assertTrue(i == last || i == last + 1, "index jumps at " + v);
            assertTrue(LatencyHistogram.highestEquivalent(i) >= v, "bucket " + i + " ends below " + v);
            last = i;
        }
        assertEquals(LatencyHistogram.BUCKETS - 1, LatencyHistogram.index(LatencyHistogram.MAX_VALUE));
    }

    @Test
    void smallValuesAreExact() {
        LatencyHistogram h = new LatencyHistogram();
        for (int v = 1; v <= 200; v++) {
            h.record(v);
        }
        assertEquals(100, h.percentile(50));
        assertEquals(180, h.percentile(90));
        assertEquals(198, h.percentile(99));
        assertEquals(200, h.percentile(100));
        assertEquals(1, h.min());
        assertEquals(100.5, h.mean(), 1e-9);
    }

    @Test
    void percentilesOfARandomSampleAreWithinOnePercentOfTheExactOnes() {
        SplittableRandom r = new SplittableRandom(7);
        long[] values = new long[200_000];
        LatencyHistogram h = new LatencyHistogram();
        for (int i = 0; i < values.length; i++) {
            // log-uniform from 1 us to 100 ms, like real latencies with a long tail
            values[i] = (long) Math.exp(Math.log(1_000) + r.nextDouble() * (Math.log(100_000_000) - Math.log(1_000)));
            h.record(values[i]);
        }
        Arrays.sort(values);
        for (double p : new double[] {50, 90, 99, 99.9}) {
            long exact = values[(int) Math.ceil(p / 100 * values.length) - 1];
            long got = h.percentile(p);
            assertTrue(got >= exact && got <= exact * 1.008 + 1, "p" + p + ": exact " + exact + " got " + got);
        }
        assertEquals(values[values.length - 1], h.max());
        assertEquals(values[values.length - 1], h.percentile(100));
    }

    @Test
    void mergeEqualsRecordingEverythingInOne() {
        LatencyHistogram a = new LatencyHistogram();
        LatencyHistogram b = new LatencyHistogram();
        LatencyHistogram both = new LatencyHistogram();
        for (long v = 1000; v < 200_000; v += 37) {
            (v % 3 == 0 ? a : b).record(v);
            both.record(v);
        }
        a.add(b);
        assertEquals(both.count(), a.count());
        for (double p : new double[] {1, 50, 99, 99.9, 100}) {
            assertEquals(both.percentile(p), a.percentile(p));
        }
        assertEquals(both.min(), a.min());
        assertEquals(both.max(), a.max());
    }

    @Test
    void emptyAndOutOfRange() {
        LatencyHistogram h = new LatencyHistogram();
        assertEquals(0, h.percentile(99));
        assertEquals(0, h.min());
        assertThrows(IllegalArgumentException.class, () -> h.percentile(0));
        assertThrows(IllegalArgumentException.class, () -> h.percentile(100.1));
        h.record(Long.MAX_VALUE);
        h.record(-5);
        assertEquals(LatencyHistogram.MAX_VALUE, h.max());
        assertEquals(0, h.min());
    }
}
