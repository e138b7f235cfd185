package io.fastblock.local;

import io.fastblock.protocol.codec.BufferPoolDefaults;
import io.fastblock.protocol.config.CommandLine;
import io.fastblock.protocol.Iqn;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Brings up a whole cluster on one machine as separate processes: the namenode (with its
 * embedded ZooKeeper), the storage servers (a process each, or one for all of them with
 * {@code --storage-jvm=shared}) and the iSCSI gateway, each with its data under one
 * directory, and stops them on SIGINT/SIGTERM. This is {@code make up}; the end-to-end tests use
 * the same class so that what they test is what users run.
 */
public final class LocalCluster implements AutoCloseable {
    private static final long READY_TIMEOUT_S = 90;
    /** The name of the one storage process when the servers share a JVM. */
    public static final String STORAGE_GROUP = "storage";

    private final LocalClusterConfig config;
    private final String classpath;
    private final PrintStream out;
    private final Map<String, ChildProcess> children = new LinkedHashMap<>();
    private final AtomicBoolean closing = new AtomicBoolean();

    private LocalCluster(LocalClusterConfig config, String classpath, PrintStream out) {
        this.config = config;
        this.classpath = classpath;
        this.out = out;
    }

    public static void main(String[] args) throws Exception {
        LocalClusterConfig config;
        if (CommandLine.wantsHelp(args)) {
            System.out.print(LocalClusterConfig.usage());
            return;
        }
        try {
            config = LocalClusterConfig.fromArgs(args);
        } catch (IllegalArgumentException e) {
            System.err.println("fastblock-local-cluster: " + e.getMessage());
            System.exit(2);
            return;
        }
        LocalCluster cluster = new LocalCluster(config, defaultClasspath(), System.out);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("stopping fastblock ...");
            cluster.close();
            System.out.println("stopped");
        }, "local-cluster-shutdown"));
        try {
            cluster.start();
        } catch (Exception e) {
            System.err.println("fastblock-local-cluster: " + e.getMessage());
            System.exit(1);
            return;
        }
        cluster.printWelcome();
        // Any server dying on its own takes the cluster down: a half-up cluster misleads.
        ChildProcess dead = cluster.awaitFirstExit();
        if (!cluster.closing.get()) {
            System.err.println("fastblock-local-cluster: " + dead.name() + " exited unexpectedly; see " + dead.logFile()
                    + "\n" + dead.tail());
            System.exit(1);
        }
    }

    /** Starts a cluster whose servers run from {@code classpath} (a jar or a class path). */
    public static LocalCluster start(LocalClusterConfig config, String classpath, PrintStream out) throws Exception {
        LocalCluster c = new LocalCluster(config, classpath, out);
        try {
            c.start();
        } catch (Exception e) {
            c.close();
            throw e;
        }
        return c;
    }

    private void start() throws Exception {
        Files.createDirectories(config.dataDir());
        startZooKeeper();
        for (int i = 1; i <= config.namenodeCount(); i++) {
            startNamenode(i);
        }
        if (config.sharedStorageJvm()) {
            startStorageGroup();
        } else {
            for (int i = 1; i <= config.storageCount(); i++) {
                startStorage(i);
            }
            for (int i = 1; i <= config.storageCount(); i++) {
                awaitReady(children.get(storageName(i)));
            }
        }
        awaitFormed();
        startGateway();
        if (config.createDemo()) {
            ensureDemoVolume();
        }
    }

    /** The ensemble's processes, all started before any is awaited (each needs a quorum to serve). */
    private void startZooKeeper() throws Exception {
        List<ZooKeeperPeer.Server> ensemble = config.zkEnsemble();
        String servers = String.join(",", ensemble.stream().map(ZooKeeperPeer.Server::toString).toList());
        for (int i = 1; i <= ensemble.size(); i++) {
            child(zookeeperName(i), "io.fastblock.local.ZooKeeperPeer", List.of(), "--id=" + i,
                    "--data-dir=" + config.dataDir().resolve(zookeeperName(i)), "--servers=" + servers).start();
        }
        for (int i = 1; i <= ensemble.size(); i++) {
            awaitReady(children.get(zookeeperName(i)));
        }
    }

    private void startNamenode(int i) throws Exception {
        List<String> args = new ArrayList<>(List.of(
                "--data-dir=" + config.dataDir().resolve(namenodeName(i)),
                "--http-port=" + (config.namenodePort() + i - 1),
                "--chunk-size=" + config.chunkSize()));
        if (config.zkServers() == 0) {
            args.add("--zk-port=" + config.zkPort());
        } else {
            args.add("--zk=" + config.zkConnect());
        }
        args.addAll(config.namenodeArgs());
        ChildProcess nn = child(namenodeName(i), "io.fastblock.namenode.NameNode", List.of(), args.toArray(String[]::new));
        nn.start();
        awaitReady(nn);
    }

    private void startStorage(int i) throws IOException {
        child(storageName(i), "io.fastblock.storage.StorageServer", DATA_PATH_JVM_OPTIONS, storageArgs(i).toArray(String[]::new))
                .start();
    }

    /** Every storage server in one JVM, with the heap they would have had together. */
    private void startStorageGroup() throws IOException, InterruptedException {
        List<String> args = new ArrayList<>();
        for (int i = 1; i <= config.storageCount(); i++) {
            if (i > 1) {
                args.add("--next");
            }
            args.addAll(storageArgs(i));
        }
        ChildProcess group = child(STORAGE_GROUP, "io.fastblock.storage.StorageServerGroup",
                config.storageGroupHeap(), DATA_PATH_JVM_OPTIONS, args.toArray(String[]::new));
        group.start();
        awaitReady(group);
    }

    private List<String> storageArgs(int i) {
        List<String> args = new ArrayList<>(List.of(
                "--node-id=" + storageName(i),
                "--data-dir=" + config.dataDir().resolve(storageName(i)),
                "--port=" + (config.storagePort() + i - 1),
                "--zk=" + config.zkConnect()));
        if (config.racks() > 0) {
            args.add("--rack-label=rack-" + ((i - 1) % config.racks() + 1));
            args.add("--host-label=host-" + i);
        }
        args.addAll(config.storageArgs());
        return args;
    }

    private void startGateway() throws Exception {
        List<String> args = new ArrayList<>(List.of("--port=" + config.iscsiPort(), "--namenode=" + config.namenodeUrls()));
        args.addAll(config.gatewayArgs());
        ChildProcess gw = child("gateway", "io.fastblock.gateway.Gateway", DATA_PATH_JVM_OPTIONS, args.toArray(String[]::new));
        gw.start();
        awaitReady(gw);
    }

    /**
     * The data path's JVMs (storage servers, gateway) run the parallel collector. Its barriers cost
     * the request threads less than G1's: two clusters of one build, 4 KiB QD32 random writes,
     * 7 alternating warm rounds, parallel ahead in each by 2-12% at ~7% less server CPU per write;
     * 60 s of the same, 19,512 against 17,673 IOPS, p99.9 14.9 against 17.6 ms. What it costs is a
     * full collection when the old generation fills: at that load ~1 MiB/s reached it (a chunk's
     * write state outlives a young collection), a full collection every 2-3 minutes of 17-24 ms
     * with the 256 MiB default heap, below the run's own maximum latency (74 ms; G1's run 121 ms).
     * The metadata side (ZooKeeper, namenode) keeps the JVM's default. The data-path JVMs also
     * get {@link BufferPoolDefaults#JVM_OPTIONS}, so Netty's pools take memory without the JDK zeroing it.
     */
    static final List<String> DATA_PATH_JVM_OPTIONS = dataPathJvmOptions();

    private static List<String> dataPathJvmOptions() {
        List<String> options = new ArrayList<>(List.of("-XX:+UseParallelGC"));
        options.addAll(BufferPoolDefaults.JVM_OPTIONS);
        return List.copyOf(options);
    }

    private ChildProcess child(String name, String mainClass, List<String> jvmOptions, String... args) {
        return child(name, mainClass, config.childHeap(), jvmOptions, args);
    }

    private ChildProcess child(String name, String mainClass, String heap, List<String> jvmOptions, String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(javaExecutable());
        cmd.add("-Xmx" + heap);
        cmd.add("-XX:+ExitOnOutOfMemoryError");
        cmd.addAll(jvmOptions);
        cmd.add("-Dorg.slf4j.simpleLogger.showDateTime=true");
        cmd.add("-cp");
        cmd.add(classpath);
        cmd.add(mainClass);
        cmd.addAll(List.of(args));
        ChildProcess c = new ChildProcess(name, cmd, config.dataDir().resolve("logs").resolve(name + ".log"));
        children.put(name, c);
        return c;
    }

    private void awaitReady(ChildProcess c) throws IOException, InterruptedException {
        String line = c.awaitReady(READY_TIMEOUT_S, TimeUnit.SECONDS);
        out.println("  " + c.name() + ": " + line.substring("READY ".length()) + " (pid " + c.pid() + ")");
    }

    private void awaitFormed() throws IOException, InterruptedException {
        NamenodeAdmin admin = admin();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(READY_TIMEOUT_S);
        while (!admin.clusterFormed(config.storageCount())) {
            if (System.nanoTime() > deadline) {
                throw new IOException("the namenode did not see " + config.storageCount()
                        + " live storage servers formed into replication groups within " + READY_TIMEOUT_S + " s");
            }
            Thread.sleep(200);
        }
    }

    private void ensureDemoVolume() throws IOException, InterruptedException {
        NamenodeAdmin.Reply r = admin().createVolume(config.demoVolume(), config.demoSize(), null);
        if (r.status() != 201 && r.status() != 409) {
            throw new IOException("could not create the demo volume: HTTP " + r.status() + " " + r.body());
        }
        // A volume with no export is reachable by nobody; the demo volume is open to any initiator.
        NamenodeAdmin.Reply export = admin().createOpenExport(config.demoVolume());
        if (export.status() != 201 && export.status() != 200) {
            throw new IOException("could not export the demo volume: HTTP " + export.status() + " " + export.body());
        }
    }

    /** An admin client for every namenode: it fails over to the next URL and follows a standby's 307. */
    public NamenodeAdmin admin() {
        return new NamenodeAdmin(config.namenodeUrls());
    }

    public LocalClusterConfig config() {
        return config;
    }

    /** The iSCSI URL of LUN 0 of a volume's target on this cluster's gateway. */
    public String iscsiUrl(String volume) {
        return "iscsi://127.0.0.1:" + config.iscsiPort() + "/" + Iqn.forVolume(volume) + "/0";
    }

    public Map<String, ChildProcess> processes() {
        return children;
    }

    /** Starts a stopped or killed server again on its data directory and waits until it serves. */
    public void restart(String name) throws IOException, InterruptedException {
        ChildProcess c = children.get(name);
        if (c == null) {
            throw new IllegalArgumentException("no process named " + name + "; have " + children.keySet());
        }
        if (c.isAlive()) {
            throw new IllegalStateException(name + " is still running");
        }
        c.start();
        awaitReady(c);
    }

    /** kill -9 of every server, newest first: the crash tests' power cut. */
    public void killAll() throws InterruptedException {
        List<ChildProcess> all = new ArrayList<>(children.values());
        for (ChildProcess c : all) {
            c.kill();
        }
    }

    private ChildProcess awaitFirstExit() throws InterruptedException {
        List<java.util.concurrent.CompletableFuture<?>> exits = new ArrayList<>();
        Map<Object, ChildProcess> byFuture = new java.util.IdentityHashMap<>();
        for (ChildProcess c : children.values()) {
            var f = c.onExit();
            exits.add(f);
            byFuture.put(f, c);
        }
        java.util.concurrent.CompletableFuture.anyOf(exits.toArray(new java.util.concurrent.CompletableFuture<?>[0]))
                .exceptionally(t -> null).join();
        for (var f : exits) {
            if (f.isDone()) {
                return byFuture.get(f);
            }
        }
        throw new IllegalStateException("no process exited");
    }

    /** Stops the gateway first and ZooKeeper last, so no server loses its peers before itself. */
    @Override
    public void close() {
        if (!closing.compareAndSet(false, true)) {
            return;
        }
        List<ChildProcess> order = new ArrayList<>(children.values());
        java.util.Collections.reverse(order);
        for (ChildProcess c : order) {
            try {
                c.stop(15);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private void printWelcome() {
        String url = iscsiUrl(config.demoVolume());
        out.println();
        out.println("fastblock is up: namenode, " + config.storageCount() + " storage servers and the iSCSI gateway");
        out.println("NAMENODE " + config.namenodeUrl());
        out.println("data and logs: " + config.dataDir());
        if (config.createDemo()) {
            out.println("demo volume '" + config.demoVolume() + "' (" + config.demoSize() + ", thin):");
            out.println(url);
            out.println();
            out.println("try:");
            out.println("  iscsi-ls -s iscsi://127.0.0.1:" + config.iscsiPort());
            out.println("  iscsi-inq " + url);
            out.println("  iscsi-readcapacity16 " + url);
            out.println("  qemu-img info " + url);
            out.println("  qemu-img convert -n -O raw disk.img " + url);
        }
        out.println("Ctrl-C stops every process; running it again on the same directory brings the data back.");
        out.flush();
    }

    public static String storageName(int i) {
        return "storage-" + i;
    }

    /** The first namenode keeps the name it always had, so {@code make up}'s data directory stays the same. */
    public static String namenodeName(int i) {
        return i == 1 ? "namenode" : "namenode-" + i;
    }

    public static String zookeeperName(int i) {
        return "zookeeper-" + i;
    }

    private static String javaExecutable() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** The jar this class was loaded from when run with {@code java -jar}, else the class path. */
    static String defaultClasspath() {
        String jar = System.getProperty("fastblock.jar");
        if (jar != null) {
            return jar;
        }
        try {
            Path self = Path.of(LocalCluster.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            if (Files.isRegularFile(self)) {
                return self.toString();
            }
        } catch (URISyntaxException | SecurityException e) {
            // fall through to the class path
        }
        return System.getProperty("java.class.path");
    }
}
