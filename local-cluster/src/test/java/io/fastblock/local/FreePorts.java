package io.fastblock.local;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.ThreadLocalRandom;

/** Ports for a test cluster, so tests never collide with a cluster started by {@code make up}. */
final class FreePorts {
    private FreePorts() {
    }

    /** The first of {@code count} consecutive ports free on 127.0.0.1. */
    static int consecutive(int count) {
        for (int attempt = 0; attempt < 200; attempt++) {
            int base = ThreadLocalRandom.current().nextInt(20000, 40000);
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

    private static boolean isFree(int port) {
        try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            s.setReuseAddress(true);
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
