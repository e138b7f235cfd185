package io.fastblock.local;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs a third-party tool (libiscsi's, qemu-img) with a time bound and captures what it says. */
final class ExternalCommand {
    record Result(int exitCode, String output) {
    }

    private ExternalCommand() {
    }

    static Result run(long timeoutSeconds, String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(List.of(command)).redirectErrorStream(true).start();
        byte[][] out = new byte[1][];
        Thread reader = new Thread(() -> {
            try {
                out[0] = p.getInputStream().readAllBytes();
            } catch (IOException e) {
                out[0] = new byte[0];
            }
        });
        reader.start();
        if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            p.waitFor(5, TimeUnit.SECONDS);
            reader.join(5000);
            throw new IOException(String.join(" ", command) + " did not finish in " + timeoutSeconds + " s");
        }
        reader.join(5000);
        return new Result(p.exitValue(), out[0] == null ? "" : new String(out[0], StandardCharsets.UTF_8));
    }

    static Result ok(long timeoutSeconds, String... command) throws IOException, InterruptedException {
        Result r = run(timeoutSeconds, command);
        if (r.exitCode() != 0) {
            throw new AssertionError(String.join(" ", command) + " exited " + r.exitCode() + ":\n" + r.output());
        }
        return r;
    }
}
