package io.fastblock.namenode.meta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.meta.MetaJson;
import io.fastblock.protocol.meta.VolumeRecord;
import io.fastblock.protocol.meta.ZkPaths;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

class VolumeStoreTest extends ZkTestSupport {
    private static final long GIB = 1L << 30;
    private static final long CHUNK = 64L << 20;

    @Test
    void createStoresRecordAndEmptyChunkMap() throws Exception {
        VolumeStore store = new VolumeStore(zk);
        VolumeRecord v = store.create("vol1", GIB, CHUNK);
        assertEquals(1, v.id());
        assertEquals(512, v.blockSize());
        assertEquals("available", v.state());
        assertEquals(v, MetaJson.read(zk.getData().forPath(ZkPaths.volume("vol1")), VolumeRecord.class));
        assertNotNull(zk.checkExists().forPath(ZkPaths.chunkMap("vol1")));
        assertEquals(List.of(), zk.getChildren().forPath(ZkPaths.chunkMap("vol1")));
        assertEquals(v, store.get("vol1").orElseThrow());
        assertEquals(2, store.create("vol2", GIB, CHUNK).id());
    }

    @Test
    void duplicateNameIsRejectedAndDoesNotConsumeAnId() {
        VolumeStore store = new VolumeStore(zk);
        store.create("vol1", GIB, CHUNK);
        assertThrows(VolumeExistsException.class, () -> store.create("vol1", 2 * GIB, CHUNK));
        assertEquals(GIB, store.get("vol1").orElseThrow().size());
        assertEquals(2, store.create("vol2", GIB, CHUNK).id());
    }

    @Test
    void concurrentCreatesGetDistinctIds() throws Exception {
        List<VolumeRecord> created = race(8, i -> new VolumeStore(zk).create("vol" + i, GIB, CHUNK));
        Set<Long> ids = new HashSet<>();
        for (VolumeRecord v : created) {
            ids.add(v.id());
        }
        assertEquals(Set.of(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L), ids);
    }

    @Test
    void concurrentCreatesOfOneNameHaveOneWinner() throws Exception {
        List<Object> outcomes = race(8, i -> {
            try {
                return new VolumeStore(zk).create("same", GIB + i * 512L, CHUNK);
            } catch (VolumeExistsException e) {
                return e;
            }
        });
        List<VolumeRecord> winners = new ArrayList<>();
        for (Object o : outcomes) {
            if (o instanceof VolumeRecord v) {
                winners.add(v);
            } else {
                assertTrue(o instanceof VolumeExistsException, String.valueOf(o));
            }
        }
        assertEquals(1, winners.size());
        assertEquals(winners.get(0), new VolumeStore(zk).get("same").orElseThrow());
    }

    @Test
    void listIsOrderedById() {
        VolumeStore store = new VolumeStore(zk);
        store.create("zeta", GIB, CHUNK);
        store.create("alpha", GIB, CHUNK);
        assertEquals(List.of("zeta", "alpha"), store.list().stream().map(VolumeRecord::name).toList());
    }

    @Test
    void deleteRemovesRecordAndChunkMap() throws Exception {
        VolumeStore store = new VolumeStore(zk);
        ChunkMapStore chunks = new ChunkMapStore(zk);
        store.create("vol1", GIB, CHUNK);
        chunks.allocate("vol1", 3, () -> 1);
        assertTrue(store.delete("vol1"));
        assertNull(zk.checkExists().forPath(ZkPaths.volume("vol1")));
        assertTrue(store.get("vol1").isEmpty());
        assertFalse(store.delete("vol1"));
        // The name can be used again and starts with an empty chunk map.
        store.create("vol1", GIB, CHUNK);
        assertTrue(chunks.lookup("vol1", 3).isEmpty());
    }

    interface Task<T> {
        T run(int i) throws Exception;
    }

    /** Runs {@code n} tasks released at the same moment and returns their results. */
    static <T> List<T> race(int n, Task<T> task) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<T>> futures = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                int id = i;
                Callable<T> c = () -> {
                    go.await();
                    return task.run(id);
                };
                futures.add(pool.submit(c));
            }
            go.countDown();
            List<T> out = new ArrayList<>();
            for (Future<T> f : futures) {
                try {
                    out.add(f.get());
                } catch (ExecutionException e) {
                    throw new AssertionError("task failed", e.getCause());
                }
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }
}
