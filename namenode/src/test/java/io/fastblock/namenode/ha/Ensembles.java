package io.fastblock.namenode.ha;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;

/**
 * ZooKeeper test ensembles whose ports are all different. {@code new TestingCluster(n)} picks each
 * client, election and quorum port by binding port 0 and closing it again, one at a time, so two
 * of them can come out equal; a CI run failed on that ("Client and election port must be
 * different"). Holding every socket open until all ports are chosen makes them distinct. They are
 * taken below the kernel's ephemeral range: a follower binds its quorum port only when it becomes
 * leader, and a port in that range can meanwhile be the local end of an outgoing connection (the
 * local cluster's acceptance test lost a new leader that way). Also: which server leads an
 * ensemble, as the tests that kill the leader need to know.
 */
final class Ensembles {
    private static final int LOWEST_PORT = 10_000;

    private Ensembles() {
    }

    static TestingCluster of(int servers) throws IOException {
        List<ServerSocket> held = new ArrayList<>();
        try {
            int below = ephemeralLow();
            for (int attempt = 0; held.size() < servers * 3; attempt++) {
                if (attempt == 1000) {
                    throw new IOException("no " + servers * 3 + " free ports between " + LOWEST_PORT + " and " + below);
                }
                int port = ThreadLocalRandom.current().nextInt(LOWEST_PORT, below);
                try {
                    held.add(new ServerSocket(port, 1, InetAddress.getLoopbackAddress()));
                } catch (IOException taken) {
                    // in use (by one of ours too): draw another
                }
            }
            List<InstanceSpec> specs = new ArrayList<>();
            for (int s = 0; s < servers; s++) {
                specs.add(new InstanceSpec(null, held.get(3 * s).getLocalPort(), held.get(3 * s + 1).getLocalPort(),
                        held.get(3 * s + 2).getLocalPort(), true, s + 1));
            }
            return new TestingCluster(specs);
        } finally {
            for (ServerSocket s : held) {
                s.close();
            }
        }
    }

    /** The start of the kernel's ephemeral range ({@code net.ipv4.ip_local_port_range}), 32768 if unreadable. */
    private static int ephemeralLow() {
        try {
            return Integer.parseInt(Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).get(0).trim()
                    .split("\\s+")[0]);
        } catch (IOException | RuntimeException e) {
            return 32_768;
        }
    }

    /** The server that leads the ensemble now, or null when none says so. */
    static InstanceSpec leader(TestingCluster ensemble) {
        for (InstanceSpec spec : ensemble.getInstances()) {
            if ("leader".equals(mode(spec.getPort()))) {
                return spec;
            }
        }
        return null;
    }

    /** A ZooKeeper server's role, from its "srvr" four-letter word (whitelisted by default). */
    static String mode(int clientPort) {
        try (Socket s = new Socket("127.0.0.1", clientPort)) {
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            out.write("srvr".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            for (String line : new String(in.readAllBytes(), StandardCharsets.US_ASCII).split("\n")) {
                if (line.startsWith("Mode: ")) {
                    return line.substring(6).trim();
                }
            }
            return "unknown";
        } catch (IOException e) {
            return "unreachable";
        }
    }
}
