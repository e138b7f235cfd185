package io.fastblock.storage.log;

import static io.fastblock.storage.log.LogFixture.bytes;
import static io.fastblock.storage.log.LogFixture.write;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.StorageMetrics;
import java.nio.file.Path;
import java.util.BitSet;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LiveBytesTest {
    @TempDir
    Path dir;

    @Test
    void liveBytesEqualTheBytesStillReadableAndSurviveARestart() throws Exception {
        StorageMetrics metrics = new StorageMetrics();
        ChunkId a = new ChunkId(1, 0);
        ChunkId b = new ChunkId(1, 1);
        BitSet writtenA = new BitSet();
        BitSet writtenB = new BitSet();
        Map<Long, Long> before;
        long diskBefore;
        try (LogStore store = LogStore.open(dir, 32 * 1024, metrics)) {
            assertEquals(1.0, store.utilisation(), "an empty log counts as fully used");
            Random r = new Random(5);
            for (int i = 0; i < 200; i++) {
                boolean first = r.nextBoolean();
                int len = 1 + r.nextInt(3000);
                int off = r.nextInt(40_000);
                write(store, first ? a : b, off, bytes(len, i));
                (first ? writtenA : writtenB).set(off, off + len);
            }
            long live = writtenA.cardinality() + writtenB.cardinality();
            assertEquals(live, store.liveBytes().total());
            long sum = store.liveBytes().snapshot().values().stream().mapToLong(Long::longValue).sum();
            assertEquals(live, sum, "per-segment figures add up to the total");
            assertTrue(store.diskBytes() > live, "overwrites leave dead bytes on disk");
            assertEquals((double) live / store.diskBytes(), store.utilisation(), 1e-12);
            assertEquals(store.utilisation(), metrics.registry().get("fastblock.log.utilisation").gauge().value(), 1e-12);
            before = store.liveBytes().snapshot();
            diskBefore = store.diskBytes();
        }
        try (LogStore store = LogStore.open(dir, 32 * 1024, metrics)) {
            before.values().removeIf(v -> v == 0);
            Map<Long, Long> after = store.liveBytes().snapshot();
            after.values().removeIf(v -> v == 0);
            assertEquals(before, after, "rebuilt from the index at open");
            assertEquals(diskBefore, store.diskBytes());
            assertEquals(store.utilisation(), metrics.registry().get("fastblock.log.utilisation").gauge().value(), 1e-12,
                    "the gauge follows the reopened store");
        }
    }
}
