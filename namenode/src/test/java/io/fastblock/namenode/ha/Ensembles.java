package io.fastblock.namenode.ha;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;

/**
 * ZooKeeper test ensembles whose ports are all different. {@code new TestingCluster(n)} picks each
 * client, election and quorum port by binding port 0 and closing it again, one at a time, so two
 * of them can come out equal; a CI run failed on that ("Client and election port must be
 * different"). Holding every socket open until all ports are chosen makes them distinct. Also: which
 * server leads an ensemble, as the tests that kill the leader need to know.
 */
final class Ensembles {
    private Ensembles() {
    }

    static TestingCluster of(int servers) throws IOException {
        List<ServerSocket> held = new ArrayList<>();
        try {
            for (int i = 0; i < servers * 3; i++) {
                held.add(new ServerSocket(0, 1, InetAddress.getLoopbackAddress()));
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
