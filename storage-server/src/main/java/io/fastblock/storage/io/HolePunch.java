package io.fastblock.storage.io;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gives a file range's disk blocks back (the range then reads as zeros, the file keeps its size).
 * Java has no fallocate, so this runs util-linux's {@code fallocate --punch-hole}: one short
 * process per call, meant for large ranges only (callers zero small ones instead). If the tool
 * is missing or the filesystem refuses, the first failure is logged and punching stays off for
 * the process; callers then write zeros, which reads the same but keeps the blocks.
 */
public final class HolePunch {
    private static final Logger LOG = LoggerFactory.getLogger(HolePunch.class);
    /** Below this a range is zero-written: a process per small trim would cost more than its space. */
    public static final long MIN_BYTES = 1 << 20;
    private static final AtomicBoolean DISABLED = new AtomicBoolean(Boolean.getBoolean("fastblock.noHolePunch"));

    private HolePunch() {
    }

    /** Punches {@code [offset, offset + length)}; false if it could not (the caller writes zeros). */
    public static boolean punch(Path file, long offset, long length) {
        if (DISABLED.get() || length <= 0) {
            return false;
        }
        try {
            Process p = new ProcessBuilder("fallocate", "--punch-hole", "--keep-size", "--offset", Long.toString(offset),
                    "--length", Long.toString(length), file.toString()).redirectErrorStream(true).start();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException("fallocate --punch-hole did not finish within 30 s");
            }
            if (p.exitValue() != 0) {
                String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).trim();
                throw new IOException("fallocate --punch-hole exited " + p.exitValue() + ": " + out);
            }
            return true;
        } catch (IOException e) {
            if (DISABLED.compareAndSet(false, true)) {
                LOG.warn("cannot punch holes into {} ({}); trimmed chunk ranges are zero-written from now on and keep"
                        + " their disk blocks", file, e.getMessage());
            }
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
