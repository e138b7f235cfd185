package io.fastblock.storage;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A storage server in a JVM of its own, for tests that kill it with SIGKILL: started on the test
 * class path with its data in {@code dir/data} and its log in {@code dir/stderr.log}.
 */
final class StorageServerProcess {
    private StorageServerProcess() {
    }

    /** Starts node {@code nodeId} on an ephemeral port against ZooKeeper {@code zk}, with {@code options} added. */
    static Process launch(Path dir, String nodeId, String zk, String... options) throws Exception {
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", cp, StorageServer.class.getName(), "--node-id=" + nodeId, "--data-dir=" + dir.resolve("data"),
                "--port=0", "--zk=" + zk));
        cmd.addAll(List.of(options));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.redirectError(dir.resolve("stderr.log").toFile());
        return pb.start();
    }

    /** Waits (60 s at most) for the server's READY line and returns the port it listens on. */
    static int awaitReady(Process p, String nodeId) throws Exception {
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        String line;
        while ((line = out.readLine()) != null && System.nanoTime() < deadline) {
            if (line.startsWith("READY storage " + nodeId + " ")) {
                return Integer.parseInt(line.substring(line.lastIndexOf(':') + 1));
            }
        }
        throw new AssertionError("storage server did not print READY (exit " + (p.isAlive() ? "running" : p.exitValue()) + ")");
    }
}
