package io.fastblock.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * bench/floor/chainfloor.c, the logic-free chain the performance docs measure fastblock against, does
 * the work its figures claim: built with gcc, run in fastblock's layout (gateway, head, middle, tail on
 * real loopback sockets), every acknowledged write is in the tail's log and in every replica's file,
 * reads come back through the gateway from the head, and bad usage is refused. Asserts behaviour, not speed.
 */
class ChainFloorIT {
    private static final int BS = 4096;

    @TempDir
    static Path build;
    static Path binary;

    @TempDir
    Path dir;
    private final List<Process> nodes = new ArrayList<>();

    @BeforeAll
    static void compile() throws Exception {
        binary = build.resolve("chainfloor");
        Process gcc = new ProcessBuilder("gcc", "-O2", "-Wall", "-Werror", "-pthread", "-o", binary.toString(),
                Path.of("floor/chainfloor.c").toAbsolutePath().toString()).redirectErrorStream(true).start();
        String out = new String(gcc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(gcc.waitFor(60, TimeUnit.SECONDS), "gcc did not finish");
        assertEquals(0, gcc.exitValue(), "gcc failed:\n" + out);
    }

    @AfterEach
    void stopNodes() throws InterruptedException {
        for (Process p : nodes) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** Starts a node on a free port and returns the port it says it listens on. */
    private int node(String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(binary.toString(), "node", "--listen", "0"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        nodes.add(p);
        String line = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.US_ASCII)).readLine();
        assertTrue(line != null && line.startsWith("listening "), "node said: " + line);
        return Integer.parseInt(line.substring("listening ".length()).trim());
    }

    /** The chain in fastblock's layout; returns the gateway's port. */
    private int chain(String... headArgs) throws IOException {
        return chain(0, headArgs);
    }

    /** As {@link #chain(String...)}; with {@code ackPort} > 0 the tail answers the gateway there directly. */
    private int chain(int ackPort, String... headArgs) throws IOException {
        List<String> tailArgs = new ArrayList<>(List.of("--file", dir.resolve("tail.dat").toString(), "--log",
                dir.resolve("tail-log.dat").toString(), "--fsync"));
        if (ackPort > 0) {
            tailArgs.addAll(List.of("--ack-to", String.valueOf(ackPort)));
        }
        int tail = node(tailArgs.toArray(String[]::new));
        int middle = node("--next", String.valueOf(tail), "--file", dir.resolve("middle.dat").toString());
        List<String> head = new ArrayList<>(List.of("--next", String.valueOf(middle), "--file",
                dir.resolve("head.dat").toString()));
        head.addAll(List.of(headArgs));
        int headPort = node(head.toArray(String[]::new));
        return ackPort > 0 ? node("--next", String.valueOf(headPort), "--ack-listen", String.valueOf(ackPort))
                : node("--next", String.valueOf(headPort));
    }

    private static Result run(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(binary.toString()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "did not finish: " + cmd);
        return new Result(p.exitValue(), out);
    }

    private record Result(int exit, String out) {
        /** The client's "key value" pairs. */
        Map<String, String> fields() {
            String[] f = out.split("\\s+");
            Map<String, String> m = new HashMap<>();
            for (int i = 0; i + 1 < f.length; i += 2) {
                m.put(f[i], f[i + 1]);
            }
            return m;
        }
    }

    @Test
    void everyAcknowledgedWriteIsInTheTailsLogAndOnEveryReplica() throws Exception {
        writesAreLoggedBeforeTheyAreAcknowledged(chain());
    }

    @Test
    void soWhenTheTailAnswersTheGatewayDirectly() throws Exception {
        int ackPort;
        try (java.net.ServerSocket free = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            ackPort = free.getLocalPort();
        }
        writesAreLoggedBeforeTheyAreAcknowledged(chain(ackPort));
    }

    private void writesAreLoggedBeforeTheyAreAcknowledged(int gateway) throws Exception {
        Result r = run("client", "--connect", String.valueOf(gateway), "--bs", String.valueOf(BS), "--qd", "8",
                "--seconds", "1", "--ramp", "0", "--span", String.valueOf(16 << 20));
        assertEquals(0, r.exit(), r.out());
        long acked = Long.parseLong(r.fields().get("ios"));
        assertTrue(acked > 0, r.out());
        // The tail answers only after the log holds the write; the log may hold more (writes in flight at the end).
        long logged = Files.size(dir.resolve("tail-log.dat"));
        assertTrue(logged >= acked * BS, "acknowledged " + acked + " writes, log has " + logged + " bytes");
        assertEquals(0, logged % BS, "the log holds whole writes");
        for (String replica : List.of("head.dat", "middle.dat", "tail.dat")) {
            assertTrue(Files.size(dir.resolve(replica)) > 0, replica + " got no writes");
        }
    }

    @Test
    void readsComeBackThroughTheGatewayFromTheHeadsFile() throws Exception {
        int gateway = chain("--prefill", String.valueOf(4 << 20));
        Result r = run("client", "--connect", String.valueOf(gateway), "--bs", String.valueOf(BS), "--qd", "1",
                "--seconds", "1", "--ramp", "0", "--span", String.valueOf(4 << 20), "--read");
        assertEquals(0, r.exit(), r.out());
        assertTrue(Long.parseLong(r.fields().get("ios")) > 0, r.out());
        assertTrue(Double.parseDouble(r.fields().get("p50_us")) > 0, r.out());
        assertEquals(4 << 20, Files.size(dir.resolve("head.dat")), "prefill wrote the span");
        assertEquals(0, Files.size(dir.resolve("tail-log.dat")), "reads write nothing");
    }

    @Test
    void badUsageIsRefusedWithItsReason() throws Exception {
        Result none = run("bogus");
        assertEquals(2, none.exit());
        assertTrue(none.out().contains("usage: chainfloor node"), none.out());
        Result depth = run("client", "--connect", "1", "--qd", "0");
        assertEquals(2, depth.exit());
        assertTrue(depth.out().contains("--qd must be 1..4096"), depth.out());
    }
}
