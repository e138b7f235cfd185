package io.fastblock.namenode.ha;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;

/**
 * ZooKeeper test ensembles whose ports are all different. {@code new TestingCluster(n)} picks each
 * client, election and quorum port by binding port 0 and closing it again, one at a time, so two
 * of them can come out equal; a CI run failed on that ("Client and election port must be
 * different"). Holding every socket open until all ports are chosen makes them distinct.
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
}
