package io.fastblock.storage;

import io.fastblock.protocol.config.CommandLine;
import java.io.Closeable;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Several storage servers in one JVM, for a cluster on one machine ({@code make up
 * ARGS=--storage-jvm=shared}). Each is a whole {@link StorageServer}: its own node id, data
 * directory, port, ZooKeeper session, log and index, and the servers reach one another over their
 * sockets as they would across machines. What they share is the JVM: one copy of the compiled
 * code, one collector, and thread switches that stay inside one process. On a 2-vCPU machine 4 KiB
 * random writes ran 11-12% faster with three servers in one JVM than in three, at 11-14% less CPU
 * per write (docs/performance.md).
 *
 * <p>The price is the failure unit: the JVM going down takes every server in it down, so
 * failure drills that stop one storage server need a JVM per server (the default).
 *
 * <p>Arguments: each server's {@link StorageServerConfig} flags, servers separated by
 * {@value #NEXT}.
 */
public final class StorageServerGroup implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(StorageServerGroup.class);

    /** Separates one server's flags from the next one's. */
    public static final String NEXT = "--next";

    private final List<StorageServer> servers;

    private StorageServerGroup(List<StorageServer> servers) {
        this.servers = List.copyOf(servers);
    }

    /**
     * Each server's configuration, in order. Fails with a message naming the server (1-based) for
     * a bad flag, and for two servers given the same data directory, port or node id, which would
     * have them overwrite each other's files, fail to bind or take each other's place.
     */
    public static List<StorageServerConfig> parse(String... args) {
        List<List<String>> parts = new ArrayList<>();
        parts.add(new ArrayList<>());
        for (String a : args) {
            if (NEXT.equals(a)) {
                parts.add(new ArrayList<>());
            } else {
                parts.get(parts.size() - 1).add(a);
            }
        }
        List<StorageServerConfig> configs = new ArrayList<>();
        Map<Path, Integer> dirs = new HashMap<>();
        Map<Integer, Integer> ports = new HashMap<>();
        Map<String, Integer> ids = new HashMap<>();
        for (int i = 0; i < parts.size(); i++) {
            int n = i + 1;
            if (parts.get(i).isEmpty()) {
                throw new IllegalArgumentException("server " + n + " has no flags (an empty part between " + NEXT + "s)");
            }
            StorageServerConfig c;
            try {
                c = StorageServerConfig.fromArgs(parts.get(i).toArray(String[]::new));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("server " + n + ": " + e.getMessage(), e);
            }
            Integer other = dirs.putIfAbsent(c.dataDir().toAbsolutePath().normalize(), n);
            if (other != null) {
                throw new IllegalArgumentException("servers " + other + " and " + n + " have the same data directory "
                        + c.dataDir());
            }
            if (c.port() != 0 && (other = ports.putIfAbsent(c.port(), n)) != null) {
                throw new IllegalArgumentException("servers " + other + " and " + n + " have the same port " + c.port());
            }
            if (c.nodeId() != null && (other = ids.putIfAbsent(c.nodeId(), n)) != null) {
                throw new IllegalArgumentException("servers " + other + " and " + n + " have the same node id " + c.nodeId());
            }
            configs.add(c);
        }
        return configs;
    }

    /**
     * Starts the servers in order. If one cannot start, the ones already started are closed and
     * an {@link java.io.IOException} names the server that failed (its position, data directory
     * and port) with the cause.
     */
    public static StorageServerGroup start(List<StorageServerConfig> configs) throws java.io.IOException {
        List<StorageServer> started = new ArrayList<>();
        for (int i = 0; i < configs.size(); i++) {
            StorageServerConfig c = configs.get(i);
            try {
                started.add(StorageServer.start(c));
            } catch (Error e) {
                closeAll(started);
                throw e;
            } catch (Exception e) {
                closeAll(started);
                throw new java.io.IOException("server " + (i + 1) + " (data directory " + c.dataDir() + ", port " + c.port()
                        + ") could not start: " + e, e);
            }
        }
        return new StorageServerGroup(started);
    }

    public List<StorageServer> servers() {
        return servers;
    }

    /** Closes the servers, last started first. */
    @Override
    public void close() {
        closeAll(servers);
    }

    private static void closeAll(List<StorageServer> servers) {
        List<StorageServer> order = new ArrayList<>(servers);
        Collections.reverse(order);
        for (StorageServer s : order) {
            s.close();
        }
    }

    public static void main(String[] args) {
        io.fastblock.protocol.codec.BufferPoolDefaults.serverDefault(); // before any pooled buffer
        io.fastblock.protocol.codec.BufferLeakDetection.serverDefault();
        if (CommandLine.wantsHelp(args)) {
            System.out.print(StorageServerConfig.usage("storage-server-group <server flags> [" + NEXT
                    + " <server flags> ...]: storage servers in one JVM, each with these flags"));
            return;
        }
        io.fastblock.protocol.codec.BufferPoolDefaults.zeroedChunksWarning().ifPresent(LOG::warn);
        List<StorageServerConfig> configs;
        try {
            configs = parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("storage-server-group: " + e.getMessage());
            System.exit(2);
            return;
        }
        StorageServerGroup group;
        try {
            group = start(configs);
        } catch (java.io.IOException e) {
            System.err.println("storage-server-group: " + e.getMessage());
            e.printStackTrace();
            System.exit(1);
            return;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(group::close, "storage-shutdown"));
        List<String> endpoints = group.servers().stream().map(StorageServer::endpoint).toList();
        System.out.println("READY storage " + String.join(", ", endpoints));
        System.out.flush();
        try {
            for (StorageServer s : group.servers()) {
                s.awaitClosed();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
