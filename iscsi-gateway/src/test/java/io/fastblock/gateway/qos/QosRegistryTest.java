package io.fastblock.gateway.qos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.protocol.meta.QosSpec;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class QosRegistryTest {
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    private final Map<String, QosSpec> namenode = new ConcurrentHashMap<>();
    private final AtomicInteger asked = new AtomicInteger();
    private volatile boolean down;

    @AfterEach
    void stop() {
        timer.shutdownNow();
    }

    private QosRegistry registry() {
        return new QosRegistry(name -> {
            asked.incrementAndGet();
            return down ? CompletableFuture.failedFuture(new RuntimeException("namenode down"))
                    : CompletableFuture.completedFuture(namenode.getOrDefault(name, QosSpec.UNLIMITED));
        }, timer, Duration.ofMillis(20));
    }

    private static void await(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "condition not reached in 10 s");
            Thread.sleep(5);
        }
    }

    @Test
    void sessionsOfAVolumeShareOneThrottleThatFollowsTheNamenode() throws Exception {
        namenode.put("v", new QosSpec(500, 0, 0, 0, 0, 0));
        QosRegistry r = registry();
        QosRegistry.Handle a = r.acquire("v");
        QosRegistry.Handle b = r.acquire("v");
        QosRegistry.Handle other = r.acquire("w");
        assertSame(a.throttle(), b.throttle());
        assertTrue(a.throttle() != other.throttle());
        await(() -> a.throttle().spec().totalIopsSec() == 500);
        assertTrue(other.throttle().unlimited());

        namenode.put("v", new QosSpec(0, 0, 0, 1 << 20, 0, 0)); // changed while sessions are logged in
        await(() -> a.throttle().spec().totalBytesSec() == 1 << 20);
        assertEquals(0, a.throttle().spec().totalIopsSec());

        down = true; // an unreachable namenode leaves the last limits in force
        int before = asked.get();
        await(() -> asked.get() > before + 2);
        assertEquals(1 << 20, a.throttle().spec().totalBytesSec());

        a.close();
        a.close(); // twice is once
        assertEquals(2, r.size());
        b.close();
        other.close();
        assertEquals(0, r.size(), "the last session gone, the volume is no longer polled");
        int after = asked.get();
        Thread.sleep(100);
        assertTrue(asked.get() <= after + 1, "polling stopped");
    }
}
