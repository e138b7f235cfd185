package io.fastblock.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Test clusters' ports stay below the ephemeral range, where no outgoing connection can take them meanwhile. */
class FreePortsTest {
    @TempDir
    Path dir;

    @Test
    void portsAreBelowTheEphemeralRange() {
        int low = FreePorts.ephemeralLow(Path.of("/proc/sys/net/ipv4/ip_local_port_range"));
        for (int i = 0; i < 50; i++) {
            int base = FreePorts.consecutive(6);
            assertTrue(base >= FreePorts.LOWEST && base + 6 <= low, "ports " + base + ".." + (base + 5) + ", ephemeral from " + low);
        }
    }

    @Test
    void theRangeIsReadFromTheKernelsFileOrAssumed() throws Exception {
        Path f = dir.resolve("range");
        Files.writeString(f, "40000\t60999\n");
        assertEquals(40000, FreePorts.ephemeralLow(f));
        Files.writeString(f, "garbage\n");
        assertEquals(32768, FreePorts.ephemeralLow(f));
        assertEquals(32768, FreePorts.ephemeralLow(dir.resolve("missing")));
    }
}
