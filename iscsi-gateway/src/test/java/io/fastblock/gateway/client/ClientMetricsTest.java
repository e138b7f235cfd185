package io.fastblock.gateway.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import org.junit.jupiter.api.Test;

class ClientMetricsTest {
    private static List<Meter.Id> metersOf(SimpleMeterRegistry registry, String volume) {
        return registry.getMeters().stream().map(Meter::getId).filter(id -> volume.equals(id.getTag("volume"))).toList();
    }

    @Test
    void metersRegisteredOnFirstUseCountWhileTheVolumeIsOpen() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ClientMetrics m = new ClientMetrics(registry, "vol1");
        m.retry("lease-moved");
        m.retry("lease-moved");
        m.read(ReplicaRole.TAIL, 4096);
        assertEquals(2.0, registry.get("fastblock.gateway.retries").tags("volume", "vol1", "reason", "lease-moved")
                .counter().count());
        assertEquals(4096.0, registry.get("fastblock.gateway.read.bytes").tags("volume", "vol1", "route", "tail")
                .counter().count());
    }

    @Test
    void aRetryFinishingAfterTheLastCloseRegistersNothing() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ClientMetrics closed = new ClientMetrics(registry, "vol1");
        ClientMetrics other = new ClientMetrics(registry, "vol2");
        closed.retry("timeout");
        closed.remove();
        assertTrue(metersOf(registry, "vol1").isEmpty());

        closed.retry("timeout");
        closed.retry("chain-changed");
        closed.read(ReplicaRole.TAIL, 512);
        assertTrue(metersOf(registry, "vol1").isEmpty(), () -> "meters came back: " + metersOf(registry, "vol1"));

        // The volume opened again gets fresh meters, and the old instance's late calls leave them alone.
        ClientMetrics reopened = new ClientMetrics(registry, "vol1");
        reopened.retry("timeout");
        closed.retry("timeout");
        assertEquals(1.0, registry.get("fastblock.gateway.retries").tags("volume", "vol1", "reason", "timeout")
                .counter().count());
        other.retry("timeout");
        assertEquals(1.0, registry.get("fastblock.gateway.retries").tags("volume", "vol2", "reason", "timeout")
                .counter().count());
    }
}
