package io.fastblock.namenode.meta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.fastblock.namenode.capacity.InsufficientCapacityException;
import io.fastblock.namenode.capacity.ProvisionGuard;
import io.fastblock.protocol.meta.VolumeRecord;
import io.fastblock.protocol.meta.VolumeSource;
import io.fastblock.protocol.meta.ZkPaths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The provisioned-bytes counter on a real ZooKeeper: kept with every change, exact under races, rebuilt. */
class ProvisionedBytesTest extends ZkTestSupport {
    private static final long GIB = 1L << 30;
    private static final long CHUNK = 64L << 20;

    /** A limit of {@code limit} bytes provisioned in total. */
    private static ProvisionGuard limit(long limit) {
        return (provisioned, more) -> {
            if (provisioned + more > limit) {
                throw new InsufficientCapacityException(provisioned + " + " + more + " > " + limit);
            }
        };
    }

    private long sumOfVolumes() {
        return new VolumeStore(zk).list().stream().mapToLong(VolumeRecord::size).sum();
    }

    @Test
    void followsCreateCloneExtendAndDelete() {
        VolumeStore volumes = new VolumeStore(zk);
        LayerStacks stacks = new LayerStacks(zk);
        ProvisionedBytes counter = new ProvisionedBytes(zk);
        assertEquals(0, counter.get());
        volumes.create("a", 2 * GIB, CHUNK);
        volumes.create("b", 3 * GIB, CHUNK);
        assertEquals(5 * GIB, counter.get());
        stacks.extend("a", 4 * GIB);
        assertEquals(7 * GIB, counter.get());
        stacks.createClone(new VolumeStore.NewVolume("c", 0, 0, null, null, null), new VolumeSource("b", null));
        assertEquals(10 * GIB, counter.get());
        stacks.createSnapshot("b", "s1", null); // a snapshot provisions nothing more
        assertEquals(10 * GIB, counter.get());
        new VolumeEdits(zk).rename("a", "a2");
        assertEquals(10 * GIB, counter.get());
        volumes.delete("a2");
        assertEquals(6 * GIB, counter.get());
        assertEquals(sumOfVolumes(), counter.get());
        volumes.delete("c");
        assertEquals(3 * GIB, counter.get());
    }

    @Test
    void guardRefusesWithoutChangingAnything() {
        VolumeStore volumes = new VolumeStore(zk);
        LayerStacks stacks = new LayerStacks(zk);
        volumes.create(new VolumeStore.NewVolume("a", 6 * GIB, CHUNK, null, null, null), limit(10 * GIB));
        assertThrows(InsufficientCapacityException.class, () -> volumes.create(
                new VolumeStore.NewVolume("b", 5 * GIB, CHUNK, null, null, null), limit(10 * GIB)));
        assertThrows(InsufficientCapacityException.class, () -> stacks.extend("a", 11 * GIB, limit(10 * GIB)));
        assertThrows(InsufficientCapacityException.class, () -> stacks.createClone(
                new VolumeStore.NewVolume("c", 0, 0, null, null, null), new VolumeSource("a", null), limit(10 * GIB)));
        assertEquals(6 * GIB, new ProvisionedBytes(zk).get());
        assertEquals(List.of("a"), volumes.list().stream().map(VolumeRecord::name).toList());
        assertEquals(6 * GIB, volumes.get("a").orElseThrow().size());
        stacks.extend("a", 10 * GIB, limit(10 * GIB)); // exactly at the limit is admitted
        assertEquals(10 * GIB, new ProvisionedBytes(zk).get());
    }

    @Test
    void concurrentCreatesAdmitExactlyWhatFits() throws Exception {
        assertEquals(20, race(false), "5 GiB stand, 25 GiB allowed: exactly 20 of the 40 racing creates fit");
    }

    @Test
    void concurrentCreatesAndDeletesKeepItExact() throws Exception {
        int created = race(true);
        // Deletes free room while the creates run: between 20 and 25 new ones fit, never more.
        assertEquals(true, created >= 20 && created <= 25, "created " + created);
    }

    /**
     * 16 threads race to create 40 volumes of 1 GiB under a limit of 25 GiB while 5 volumes of 1 GiB
     * stand ({@code deletes}: 5 more threads delete those meanwhile). The counter must end equal to the
     * sum of the sizes. Returns how many creates were admitted.
     */
    private int race(boolean deletes) throws Exception {
        VolumeStore seed = new VolumeStore(zk);
        for (int i = 0; i < 5; i++) {
            seed.create("old" + i, GIB, CHUNK);
        }
        ExecutorService pool = Executors.newFixedThreadPool(20);
        CountDownLatch go = new CountDownLatch(1);
        AtomicInteger created = new AtomicInteger();
        AtomicInteger refused = new AtomicInteger();
        List<Future<?>> futures = new ArrayList<>();
        try {
            for (int t = 0; t < 16; t++) {
                int thread = t;
                futures.add(pool.submit(() -> {
                    go.await();
                    VolumeStore store = new VolumeStore(zk);
                    for (int k = thread; k < 40; k += 16) {
                        try {
                            store.create(new VolumeStore.NewVolume("v" + k, GIB, CHUNK, null, null, null),
                                    limit(25 * GIB));
                            created.incrementAndGet();
                        } catch (InsufficientCapacityException e) {
                            refused.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            for (int t = 0; deletes && t < 5; t++) {
                int victim = t;
                futures.add(pool.submit(() -> {
                    go.await();
                    new VolumeStore(zk).delete("old" + victim);
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : futures) {
                f.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        long counter = new ProvisionedBytes(zk).get();
        assertEquals(sumOfVolumes(), counter);
        assertEquals((created.get() + (deletes ? 0 : 5)) * GIB, counter);
        assertEquals(40, created.get() + refused.get());
        return created.get();
    }

    @Test
    void rebuiltFromTheVolumesWhenMissing() throws Exception {
        VolumeStore volumes = new VolumeStore(zk);
        volumes.create("a", 2 * GIB, CHUNK);
        volumes.create("b", 3 * GIB, CHUNK);
        zk.delete().forPath(ZkPaths.PROVISIONED_BYTES);
        assertNull(zk.checkExists().forPath(ZkPaths.PROVISIONED_BYTES));
        // A create finds it missing, rebuilds it from the records and adds its own size.
        volumes.create("c", GIB, CHUNK);
        assertEquals(6 * GIB, new ProvisionedBytes(zk).get());
        zk.delete().forPath(ZkPaths.PROVISIONED_BYTES);
        assertEquals(6 * GIB, new ProvisionedBytes(zk).get());
        zk.delete().forPath(ZkPaths.PROVISIONED_BYTES);
        volumes.delete("a");
        assertEquals(4 * GIB, new ProvisionedBytes(zk).get());
    }

    @Test
    void unreadableCounterIsAPreciseError() throws Exception {
        new ProvisionedBytes(zk).get();
        zk.setData().forPath(ZkPaths.PROVISIONED_BYTES, "lots".getBytes());
        MetadataUnavailableException e = assertThrows(MetadataUnavailableException.class,
                () -> new ProvisionedBytes(zk).get());
        assertEquals(true, e.getMessage().contains("\"lots\""), e.getMessage());
    }
}
