package io.fastblock.local;

import java.io.BufferedReader;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Ports for a test cluster, so tests never collide with a cluster started by {@code make up}.
 *
 * <p>They are taken below the kernel's ephemeral range ({@code net.ipv4.ip_local_port_range}),
 * because many are bound only later: a ZooKeeper follower's quorum port is bound when it becomes
 * leader, a killed server's port when it restarts. A port inside the range that is free when
 * picked can meanwhile be the local end of any outgoing connection; the acceptance test once lost
 * its ZooKeeper leader's successor that way ("Couldn't bind to /127.0.0.1:37276: Address already
 * in use", the quorum did not form again and writes to new chunks failed).
 */
final class FreePorts {
    /** The lowest port handed out. */
    static final int LOWEST = 10_000;
    /** Linux's default start of the ephemeral range, where the running kernel's cannot be read. */
    private static final int LINUX_EPHEMERAL_LOW = 32_768;

    private FreePorts() {
    }

    /** The first of {@code count} consecutive ports free on 127.0.0.1, all below the ephemeral range. */
    static int consecutive(int count) {
        int below = ephemeralLow(Path.of("/proc/sys/net/ipv4/ip_local_port_range"));
        if (below - count <= LOWEST) {
            throw new IllegalStateException("no room for " + count + " ports between " + LOWEST + " and the ephemeral range at "
                    + below);
        }
        for (int attempt = 0; attempt < 200; attempt++) {
            int base = ThreadLocalRandom.current().nextInt(LOWEST, below - count);
            boolean free = true;
            for (int p = base; p < base + count && free; p++) {
                free = isFree(p);
            }
            if (free) {
                return base;
            }
        }
        throw new IllegalStateException("no " + count + " consecutive free ports");
    }

    /** The first port of the kernel's ephemeral range as {@code file} gives it ("low high"). */
    static int ephemeralLow(Path file) {
        try (BufferedReader in = Files.newBufferedReader(file)) {
            String line = in.readLine();
            if (line != null) {
                return Integer.parseInt(line.trim().split("\\s+")[0]);
            }
        } catch (IOException | NumberFormatException | SecurityException e) {
            // Not Linux, or /proc not mounted: assume the default range.
        }
        return LINUX_EPHEMERAL_LOW;
    }

    private static boolean isFree(int port) {
        try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            s.setReuseAddress(true);
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
