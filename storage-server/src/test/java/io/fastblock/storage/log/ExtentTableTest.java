package io.fastblock.storage.log;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * {@link ExtentTable} against the {@code TreeMap} it replaced, operation by operation: random puts,
 * overwrites and removes over key ranges small enough to collide often and large enough to split
 * and merge leaves many times; every answer and the size must match the model's.
 */
class ExtentTableTest {

    private static Extent extent(Random r, long offset, int length) {
        return new Extent(offset, r.nextInt(5), r.nextInt(1 << 20), r.nextInt(4096), length, r.nextLong(), r.nextInt(1 << 16),
                r.nextInt(1 << 16));
    }

    /** What the TreeMap answered for overlapping (from the floor entry on, as ExtentCache did). */
    private static List<Extent> modelOverlapping(TreeMap<Long, Extent> m, long start, long end) {
        List<Extent> out = new ArrayList<>();
        Long floor = m.floorKey(start);
        for (Extent e : m.tailMap(floor == null ? start : floor, true).values()) {
            if (e.chunkOffset() >= end) {
                break;
            }
            if (e.end() > start) {
                out.add(e);
            }
        }
        return out;
    }

    private static Extent modelEndingAt(TreeMap<Long, Extent> m, long offset) {
        Map.Entry<Long, Extent> below = m.lowerEntry(offset);
        return below != null && below.getValue().end() == offset ? below.getValue() : null;
    }

    @Test
    void answersAsTheTreeMapDidThroughSplitsAndMerges() {
        for (int keys : new int[] {10, 300, 5000}) {
            for (long seed = 1; seed <= 3; seed++) {
                Random r = new Random(seed * 31 + keys);
                ExtentTable table = new ExtentTable();
                TreeMap<Long, Extent> model = new TreeMap<>();
                int maxLeaves = 0;
                for (int step = 0; step < 60_000; step++) {
                    long key = r.nextInt(keys) * 4096L;
                    int op = r.nextInt(10);
                    String where = "keys " + keys + " seed " + seed + " step " + step;
                    // Phases: mostly puts, then mostly removes, so the table grows, shrinks and grows again.
                    boolean removing = (step / 15_000) % 2 == 1;
                    if (op < (removing ? 2 : 6)) {
                        Extent e = extent(r, key, 4096 * (1 + r.nextInt(3)));
                        assertEquals(model.put(key, e) == null, table.put(e), where);
                    } else if (op < 8) {
                        assertEquals(model.remove(key) != null, table.remove(key), where);
                    } else if (op < 9) {
                        long start = key + r.nextInt(4096);
                        long end = start + 1 + r.nextInt(5 * 4096);
                        assertEquals(modelOverlapping(model, start, end), table.overlapping(start, end), where);
                    } else {
                        long at = key + (r.nextBoolean() ? 0 : r.nextInt(4096 * 3));
                        assertEquals(modelEndingAt(model, at), table.endingAt(at), where);
                    }
                    assertEquals(model.size(), table.size(), where);
                    maxLeaves = Math.max(maxLeaves, table.leaves());
                    // Merges keep leaves from thinning out: no two neighbours both hold fewer than MERGE_BELOW.
                    assertTrue(table.leaves() <= 2 + 2 * table.size() / ExtentTable.MERGE_BELOW,
                            where + ": " + table.leaves() + " leaves for " + table.size() + " extents");
                }
                assertEquals(modelOverlapping(model, 0, Long.MAX_VALUE), table.overlapping(0, Long.MAX_VALUE));
                if (keys >= 300) {
                    assertTrue(maxLeaves > 2, "leaves were split: " + maxLeaves);
                }
            }
        }
    }

    @Test
    void emptyTableAndEdges() {
        ExtentTable t = new ExtentTable();
        assertEquals(List.of(), t.overlapping(0, Long.MAX_VALUE));
        assertNull(t.endingAt(0));
        assertNull(t.endingAt(4096));
        assertEquals(false, t.remove(0));
        Extent a = new Extent(4096, 1, 0, 0, 4096, 1, 4096, 4096);
        assertTrue(t.put(a));
        assertNull(t.endingAt(4096), "ends at 8192, starts at 4096");
        assertEquals(a, t.endingAt(8192));
        assertEquals(List.of(), t.overlapping(0, 4096), "[0, 4096) ends where the extent starts");
        assertEquals(List.of(a), t.overlapping(8191, 8192));
        assertEquals(List.of(), t.overlapping(8192, 9000));
        Extent b = new Extent(4096, 2, 512, 0, 8192, 2, 8192, 8192);
        assertEquals(false, t.put(b), "same offset: replaced, not added");
        assertEquals(1, t.size());
        assertEquals(List.of(b), t.overlapping(0, 100_000));
        assertTrue(t.remove(4096));
        assertEquals(0, t.size());
        assertEquals(0, t.leaves());
    }

    @Test
    void ascendingAndDescendingFillsSplitEvenly() {
        for (boolean descending : new boolean[] {false, true}) {
            ExtentTable t = new ExtentTable();
            int n = 100 * ExtentTable.LEAF;
            for (int i = 0; i < n; i++) {
                long off = (descending ? n - 1 - i : i) * 4096L;
                t.put(new Extent(off, 0, off, 0, 4096, i, 4096, 4096));
            }
            assertEquals(n, t.size());
            List<Extent> all = t.overlapping(0, Long.MAX_VALUE);
            assertEquals(n, all.size());
            for (int i = 0; i < n; i++) {
                assertEquals(i * 4096L, all.get(i).chunkOffset());
            }
            assertTrue(t.leaves() <= 2 * n / ExtentTable.LEAF + 1, t.leaves() + " leaves");
        }
    }
}
