package io.fastblock.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ChildProcessTest {
    /**
     * A child that prints a lot while it stops, as a server does when it shuts down: the pipe still
     * holds most of it when the child exits, so it reaches the log only if stopping waits for it.
     */
    private static ChildProcess chatty(Path dir) {
        String script = "trap 'seq 1 20000; echo stopped cleanly; exit 0' TERM; echo 'READY test'; "
                + "while :; do sleep 0.05; done";
        return new ChildProcess("chatty", List.of("sh", "-c", script), dir.resolve("logs/chatty.log"));
    }

    private static List<String> lines(Path log) throws Exception {
        return Files.readAllLines(log, StandardCharsets.UTF_8);
    }

    @Test
    void stopReturnsOnlyOnceWhatTheChildPrintedWhileStoppingIsInItsLog(@TempDir Path dir) throws Exception {
        ChildProcess c = chatty(dir);
        c.start();
        assertEquals("READY test", c.awaitReady(10, TimeUnit.SECONDS));
        c.stop(10);
        assertFalse(c.isAlive());
        List<String> log = lines(c.logFile());
        assertEquals("stopped cleanly", log.get(log.size() - 1));
        assertTrue(log.contains("20000"));
        assertTrue(c.tail().endsWith("stopped cleanly"), c.tail());
    }
}
