package io.fastblock.storage.log;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;

/**
 * A JVM that loaded RocksDB through {@link RocksDbLibrary} and then died without a normal exit
 * (Runtime.halt, as after kill -9) leaves nothing in its temporary directory; one that loaded it
 * RocksDB's way leaves the library's 14 MiB copy there.
 */
class RocksDbLibraryTest {
    @TempDir
    Path dir;

    @Test
    void aKilledProcessLeavesNoCopyOfTheLibrary() throws Exception {
        Path tmp = Files.createDirectory(dir.resolve("tmp"));
        assertEquals("put-get-ok", runProbe(tmp, "ours"));
        assertEquals(List.of(), leftIn(tmp));
    }

    @Test
    void rocksDbsOwnLoaderLeavesOneBehindWhenKilled() throws Exception {
        Path tmp = Files.createDirectory(dir.resolve("tmp"));
        assertEquals("put-get-ok", runProbe(tmp, "rocksdb"));
        List<String> left = leftIn(tmp);
        assertEquals(1, left.size(), "left: " + left);
        assertTrue(left.get(0).startsWith("librocksdbjni"), left.get(0));
    }

    private static List<String> leftIn(Path tmp) throws IOException {
        try (Stream<Path> files = Files.walk(tmp)) {
            return files.filter(Files::isRegularFile).map(p -> tmp.relativize(p).toString()).toList();
        }
    }

    /** Runs {@link Probe} with {@code tmp} as its temporary directory; returns its last line. */
    private String runProbe(Path tmp, String loader) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Djava.io.tmpdir=" + tmp, "-cp", System.getProperty("java.class.path"), Probe.class.getName(), loader,
                dir.resolve("db-" + loader).toString()));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "probe did not finish");
        assertEquals(0, p.exitValue(), out);
        String[] lines = out.strip().split("\n");
        return lines[lines.length - 1];
    }

    /** Child JVM: loads the library one way or the other, uses RocksDB, then halts (no shutdown hooks). */
    public static final class Probe {
        public static void main(String[] args) throws Exception {
            if (args[0].equals("ours")) {
                RocksDbLibrary.load();
            } else {
                RocksDB.loadLibrary();
            }
            try (Options o = new Options().setCreateIfMissing(true); RocksDB db = RocksDB.open(o, args[1])) {
                db.put("k".getBytes(StandardCharsets.UTF_8), "v".getBytes(StandardCharsets.UTF_8));
                String v = new String(db.get("k".getBytes(StandardCharsets.UTF_8)), StandardCharsets.UTF_8);
                System.out.println(v.equals("v") ? "put-get-ok" : "put-get-wrong:" + v);
            }
            System.out.flush();
            Runtime.getRuntime().halt(0);
        }
    }
}
