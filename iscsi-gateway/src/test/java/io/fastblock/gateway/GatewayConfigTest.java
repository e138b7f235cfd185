package io.fastblock.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class GatewayConfigTest {
    @Test
    void timersHaveOneMachineDefaults() {
        GatewayConfig.Timers t = GatewayConfig.defaults().timers();
        assertEquals(Duration.ofSeconds(4), t.requestTimeout());
        assertEquals(Duration.ofSeconds(12), t.retryBudget());
        assertTrue(t.retryBudget().compareTo(Duration.ofSeconds(15)) < 0, "inside open-iscsi's abort timer");
        assertEquals(Duration.ofSeconds(10), t.nopInterval());
        assertEquals(Duration.ZERO, t.leaseRenewal(), "a third of the granted lease");
        assertEquals(Duration.ofSeconds(2), t.qosPoll());
        assertEquals(Duration.ofNanos(200_000), t.answerSpin());
    }

    @Test
    void timersAreTypedFlags() {
        GatewayConfig c = GatewayConfig.fromArgs("--request-timeout=1500ms", "--retry-budget=6s", "--nop-interval=3s",
                "--nop-timeout=5s", "--lease-renewal=1s", "--qos-poll=500ms", "--answer-spin=80us");
        GatewayConfig.Timers t = c.timers();
        assertEquals(Duration.ofMillis(1500), t.requestTimeout());
        assertEquals(Duration.ofSeconds(6), t.retryBudget());
        assertEquals(Duration.ofSeconds(3), t.nopInterval());
        assertEquals(Duration.ofSeconds(5), t.nopTimeout());
        assertEquals(Duration.ofSeconds(1), t.leaseRenewal());
        assertEquals(Duration.ofMillis(500), t.qosPoll());
        assertEquals(Duration.ofMinutes(2), GatewayConfig.parseDuration("2m"));
        assertEquals(Duration.ofNanos(80_000), t.answerSpin());
        assertEquals(Duration.ZERO, GatewayConfig.fromArgs("--answer-spin=0").timers().answerSpin(), "0: polling off");
        assertEquals("80us", GatewayConfig.format(t.answerSpin()));
    }

    @Test
    void badTimersAreRefusedWithTheFlagsName() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> GatewayConfig.fromArgs("--retry-budget=5"));
        assertTrue(e.getMessage().contains("--retry-budget"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> GatewayConfig.fromArgs("--request-timeout=4s", "--retry-budget=6s"));
        assertTrue(e.getMessage().contains("fit twice"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> GatewayConfig.fromArgs("--nop-interval=0"));
        assertTrue(e.getMessage().contains("--nop-interval"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> GatewayConfig.fromArgs("--lease-renewal=-1s"));
        e = assertThrows(IllegalArgumentException.class, () -> GatewayConfig.fromArgs("--answer-spin=2ms"));
        assertTrue(e.getMessage().contains("--answer-spin must be 0..1ms"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> GatewayConfig.fromArgs("--answer-spin=-5us"));
        assertTrue(e.getMessage().contains("--answer-spin"), e.getMessage());
    }

    @Test
    void dataMemoryIsAByteCountWithHalfTheDirectMemoryByDefault() {
        assertEquals(io.netty.util.internal.PlatformDependent.maxDirectMemory() / 2, GatewayConfig.defaults().dataMemory());
        assertEquals(64L << 20, GatewayConfig.fromArgs("--data-memory=64M").dataMemory());
        assertEquals(1L << 30, GatewayConfig.fromArgs("--data-memory=1GiB").dataMemory());
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                () -> GatewayConfig.fromArgs("--data-memory=lots"));
        assertTrue(bad.getMessage().contains("--data-memory must be a byte count"), bad.getMessage());
        IllegalArgumentException small = assertThrows(IllegalArgumentException.class,
                () -> GatewayConfig.fromArgs("--data-memory=512K"));
        assertTrue(small.getMessage().contains("--data-memory must be at least 1M"), small.getMessage());
    }

    @Test
    void readAheadIsAByteCountThatZeroTurnsOff() {
        assertEquals(128 << 10, GatewayConfig.defaults().readAhead());
        assertEquals(256 << 10, GatewayConfig.fromArgs("--read-ahead=256K").readAhead());
        assertEquals(0, GatewayConfig.fromArgs("--read-ahead=0").readAhead());
        for (String bad : new String[] {"--read-ahead=4K", "--read-ahead=2M", "--read-ahead=20000", "--read-ahead=much"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GatewayConfig.fromArgs(bad));
            assertTrue(e.getMessage().contains("read-ahead"), bad + ": " + e.getMessage());
        }
    }

    @Test
    void chunkMapEntriesBoundTheGatewaysCachedChunks() {
        assertEquals(io.fastblock.gateway.client.ChunkMapBudget.DEFAULT_LIMIT, GatewayConfig.defaults().chunkMapEntries());
        assertEquals(4096, GatewayConfig.fromArgs("--chunk-map-entries=4096").chunkMapEntries());
        for (String bad : new String[] {"--chunk-map-entries=1023", "--chunk-map-entries=0", "--chunk-map-entries=-5",
                "--chunk-map-entries=268435457", "--chunk-map-entries=99999999999"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GatewayConfig.fromArgs(bad));
            assertTrue(e.getMessage().contains("--chunk-map-entries must be 1024..268435456, got "
                    + bad.substring(bad.indexOf('=') + 1)), bad + ": " + e.getMessage());
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> GatewayConfig.fromArgs("--chunk-map-entries=many"));
        assertTrue(e.getMessage().contains("chunk-map-entries"), e.getMessage());
    }

    @Test
    void metricsPortIsOffUnlessGiven() {
        assertEquals(0, GatewayConfig.defaults().metricsPort());
        assertEquals(9560, GatewayConfig.fromArgs("--metrics-port=9560").metricsPort());
        for (String bad : new String[] {"--metrics-port=-1", "--metrics-port=65536"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GatewayConfig.fromArgs(bad));
            assertTrue(e.getMessage().contains("--metrics-port must be 0..65535"), bad + ": " + e.getMessage());
        }
    }

    @Test
    void helpDescribesEveryFlagTheParseReadsAndNoOther() {
        assertEquals("", io.fastblock.protocol.config.CommandLine.helpMismatch(GatewayConfig::from, GatewayConfig.FLAGS));
    }
}
