package io.fastblock.local;

import io.fastblock.protocol.config.CommandLine;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.server.quorum.QuorumPeerMain;

/**
 * One server of a real ZooKeeper ensemble as its own process (ZooKeeper's QuorumPeerMain with a
 * generated configuration), so the local cluster and its tests can lose a ZooKeeper server, or the
 * ensemble's leader, with kill -9. Prints {@code READY zookeeper <id> <host:port>} once this server
 * answers reads, which needs a quorum: start all peers, then wait for each.
 *
 * <pre>
 * --id=N            this server's id, 1-based
 * --data-dir=DIR    snapshots, transaction log, myid
 * --servers=H:C:Q:E,...  every server of the ensemble in id order: host, client, quorum, election ports
 * </pre>
 */
public final class ZooKeeperPeer {
    private static final int TICK_MS = 500;
    private static final long READY_TIMEOUT_S = 120;

    private ZooKeeperPeer() {
    }

    /** One member of the ensemble. */
    public record Server(String host, int clientPort, int quorumPort, int electionPort) {
        static Server parse(String text) {
            String[] p = text.split(":");
            if (p.length != 4) {
                throw new IllegalArgumentException("a server is host:clientPort:quorumPort:electionPort, got '" + text + "'");
            }
            return new Server(p[0], Integer.parseInt(p[1]), Integer.parseInt(p[2]), Integer.parseInt(p[3]));
        }

        @Override
        public String toString() {
            return host + ":" + clientPort + ":" + quorumPort + ":" + electionPort;
        }

        public String clientAddress() {
            return host + ":" + clientPort;
        }
    }

    public static void main(String[] args) throws Exception {
        CommandLine cl = CommandLine.parse(args);
        int id = cl.getInt("id", 0);
        Path dir = Path.of(cl.get("data-dir", "")).toAbsolutePath();
        String serversText = cl.get("servers", "");
        cl.rejectUnknown();
        List<Server> servers = new ArrayList<>();
        for (String s : serversText.split(",")) {
            servers.add(Server.parse(s.trim()));
        }
        if (id < 1 || id > servers.size()) {
            System.err.println("zookeeper: --id must be 1.." + servers.size() + ", got " + id);
            System.exit(2);
        }
        Path cfg = writeConfig(id, dir, servers);
        Thread server = new Thread(() -> {
            QuorumPeerMain.main(new String[] {cfg.toString()}); // exits the process on a fatal error
        }, "quorum-peer");
        server.start();
        Server me = servers.get(id - 1);
        awaitServing(me.clientAddress());
        System.out.println("READY zookeeper " + id + " " + me.clientAddress());
        System.out.flush();
        server.join();
    }

    private static Path writeConfig(int id, Path dir, List<Server> servers) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("myid"), Integer.toString(id), StandardCharsets.US_ASCII);
        StringBuilder cfg = new StringBuilder()
                .append("tickTime=").append(TICK_MS).append('\n')
                .append("initLimit=20\nsyncLimit=10\n")
                .append("dataDir=").append(dir).append('\n')
                .append("clientPortAddress=").append(servers.get(id - 1).host()).append('\n')
                .append("clientPort=").append(servers.get(id - 1).clientPort()).append('\n')
                // no AdminServer (it would take port 8080) and only the status command ("srvr": who leads)
                .append("admin.enableServer=false\n4lw.commands.whitelist=srvr\n")
                .append("standaloneEnabled=false\nreconfigEnabled=false\n");
        for (int i = 0; i < servers.size(); i++) {
            Server s = servers.get(i);
            cfg.append("server.").append(i + 1).append('=').append(s.host()).append(':').append(s.quorumPort())
                    .append(':').append(s.electionPort()).append('\n');
        }
        Path file = dir.resolve("zoo.cfg");
        Files.writeString(file, cfg, StandardCharsets.US_ASCII);
        return file;
    }

    /**
     * The server's role as it reports it ("leader", "follower"), from ZooKeeper's {@code srvr}
     * command; empty when it does not answer (down, or not in a quorum).
     */
    public static java.util.Optional<String> mode(String host, int clientPort) {
        try (java.net.Socket s = new java.net.Socket()) {
            s.connect(new java.net.InetSocketAddress(host, clientPort), 2000);
            s.setSoTimeout(2000);
            s.getOutputStream().write("srvr".getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            String out = new String(s.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
            for (String line : out.split("\n")) {
                if (line.startsWith("Mode: ")) {
                    return java.util.Optional.of(line.substring("Mode: ".length()).trim());
                }
            }
        } catch (IOException e) {
            // down or refusing: no mode
        }
        return java.util.Optional.empty();
    }

    /** Waits until this server answers a read, i.e. it has joined a quorum. */
    private static void awaitServing(String address) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(READY_TIMEOUT_S);
        while (System.nanoTime() < deadline) {
            CountDownLatch connected = new CountDownLatch(1);
            ZooKeeper zk = new ZooKeeper(address, 5000, e -> {
                if (e.getState() == org.apache.zookeeper.Watcher.Event.KeeperState.SyncConnected) {
                    connected.countDown();
                }
            });
            try {
                if (connected.await(3, TimeUnit.SECONDS)) {
                    zk.exists("/", false);
                    return;
                }
            } catch (Exception e) {
                // not serving yet
            } finally {
                zk.close();
            }
            Thread.sleep(200);
        }
        throw new IOException("ZooKeeper server " + address + " did not serve within " + READY_TIMEOUT_S + " s");
    }
}
