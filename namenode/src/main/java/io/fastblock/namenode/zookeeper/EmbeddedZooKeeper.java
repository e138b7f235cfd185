package io.fastblock.namenode.zookeeper;

import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.zookeeper.server.ServerCnxnFactory;
import org.apache.zookeeper.server.ZooKeeperServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A single ZooKeeper server inside the namenode process, for a one-machine cluster. Its snapshots
 * and transaction log live under the given directory, so a restart on the same directory brings
 * back every volume, group and chunk assignment. Storage servers connect to it like to any other
 * ZooKeeper. Production runs an external ensemble instead (--zk).
 */
public final class EmbeddedZooKeeper implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(EmbeddedZooKeeper.class);
    private static final int TICK_MS = 2000;
    private static final int MAX_CLIENT_CONNECTIONS = 1000;

    private final ZooKeeperServer server;
    private final ServerCnxnFactory factory;

    private EmbeddedZooKeeper(ZooKeeperServer server, ServerCnxnFactory factory) {
        this.server = server;
        this.factory = factory;
    }

    /** Starts a server bound to {@code host:port} (port 0 picks a free one) keeping its state in {@code dir}. */
    public static EmbeddedZooKeeper start(Path dir, String host, int port) throws IOException {
        Files.createDirectories(dir);
        File data = dir.toFile();
        ZooKeeperServer server = new ZooKeeperServer(data, data, TICK_MS);
        ServerCnxnFactory factory = ServerCnxnFactory.createFactory(new InetSocketAddress(host, port),
                MAX_CLIENT_CONNECTIONS);
        try {
            factory.startup(server);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            factory.shutdown();
            throw new IOException("interrupted while starting ZooKeeper", e);
        } catch (IOException | RuntimeException e) {
            factory.shutdown();
            server.shutdown();
            throw e;
        }
        LOG.info("embedded ZooKeeper serving on {}:{} with data in {}", host, factory.getLocalPort(), dir);
        return new EmbeddedZooKeeper(server, factory);
    }

    public int port() {
        return factory.getLocalPort();
    }

    public String connectString() {
        return factory.getLocalAddress().getHostString() + ":" + port();
    }

    @Override
    public void close() {
        factory.shutdown();
        server.shutdown();
        // Closes the snapshot/txn log files so a restart in the same process can reopen them.
        if (server.getZKDatabase() != null) {
            try {
                server.getZKDatabase().close();
            } catch (IOException e) {
                LOG.warn("closing ZooKeeper database: {}", e.toString());
            }
        }
    }
}
