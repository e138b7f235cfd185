package io.fastblock.local;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One server of the local cluster running as its own JVM. Its output goes to a log file; the
 * line starting with {@code READY} marks it as serving.
 */
public final class ChildProcess {
    private static final int TAIL_LINES = 40;
    /** How long stopping waits for the output of an exited child to reach its log. */
    private static final long DRAIN_MILLIS = 10_000;

    private final String name;
    private final List<String> command;
    private final Path logFile;
    private final Deque<String> tail = new ArrayDeque<>();
    private volatile Process process;
    private volatile CompletableFuture<String> ready;
    private volatile Thread pump;

    public ChildProcess(String name, List<String> command, Path logFile) {
        this.name = name;
        this.command = List.copyOf(command);
        this.logFile = logFile;
    }

    public String name() {
        return name;
    }

    public synchronized void start() throws IOException {
        Files.createDirectories(logFile.getParent());
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        Process p = pb.start();
        CompletableFuture<String> readyLine = new CompletableFuture<>();
        Writer log = Files.newBufferedWriter(logFile, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                StandardOpenOption.APPEND);
        log.write("---- start " + String.join(" ", command) + System.lineSeparator());
        Thread pump = new Thread(() -> pump(p, log, readyLine), name + "-output");
        pump.setDaemon(true);
        pump.start();
        p.onExit().thenRun(() -> readyLine.completeExceptionally(
                new IOException(name + " exited with status " + p.exitValue() + " before it was ready; last output:\n"
                        + tail())));
        this.process = p;
        this.ready = readyLine;
        this.pump = pump;
    }

    private void pump(Process p, Writer log, CompletableFuture<String> readyLine) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
             log) {
            String line;
            while ((line = r.readLine()) != null) {
                log.write(line);
                log.write(System.lineSeparator());
                log.flush();
                synchronized (tail) {
                    tail.addLast(line);
                    if (tail.size() > TAIL_LINES) {
                        tail.removeFirst();
                    }
                }
                if (line.startsWith("READY ")) {
                    readyLine.complete(line);
                }
            }
        } catch (IOException e) {
            readyLine.completeExceptionally(e);
        }
    }

    /** Waits for the READY line and returns it. */
    public String awaitReady(long timeout, TimeUnit unit) throws IOException, InterruptedException {
        try {
            return ready.get(timeout, unit);
        } catch (TimeoutException e) {
            throw new IOException(name + " not ready after " + unit.toSeconds(timeout) + " s; last output:\n" + tail());
        } catch (java.util.concurrent.ExecutionException e) {
            Throwable c = e.getCause();
            throw c instanceof IOException io ? io : new IOException(c);
        }
    }

    public boolean isAlive() {
        Process p = process;
        return p != null && p.isAlive();
    }

    public CompletableFuture<Process> onExit() {
        return process.onExit();
    }

    public long pid() {
        return process.pid();
    }

    /** SIGTERM, then SIGKILL if it has not exited within the grace period. */
    public void stop(long graceSeconds) throws InterruptedException {
        Process p = process;
        if (p == null || !p.isAlive()) {
            return;
        }
        // Through the handle: Process.destroy() also closes our end of the child's output, so what
        // it prints while stopping (a server's "stopped" line) met a closed pipe and was lost.
        p.toHandle().destroy();
        if (!p.waitFor(graceSeconds, TimeUnit.SECONDS)) {
            p.toHandle().destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
        drain();
    }

    /** SIGKILL: the crash tests' way of pulling the plug on the process. */
    public void kill() throws InterruptedException {
        Process p = process;
        if (p != null && p.isAlive()) {
            p.toHandle().destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
        drain();
    }

    /**
     * Waits until the output pump has copied everything the exited child wrote. What a server
     * prints while it stops is the last thing in its pipe; the pump is a daemon thread, so a
     * launcher that exits right after stopping its children would otherwise lose those lines.
     */
    private void drain() throws InterruptedException {
        Thread t = pump;
        if (t != null && !isAlive()) {
            t.join(DRAIN_MILLIS);
        }
    }

    public String tail() {
        synchronized (tail) {
            return String.join(System.lineSeparator(), tail);
        }
    }

    public Path logFile() {
        return logFile;
    }
}
