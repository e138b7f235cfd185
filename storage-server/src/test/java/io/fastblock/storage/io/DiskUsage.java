package io.fastblock.storage.io;

import java.nio.file.Path;

/** Test helper: the disk bytes a file really occupies, as stat reports them (its 512-byte blocks). */
public final class DiskUsage {
    private DiskUsage() {
    }

    public static long allocatedBytes(Path file) throws Exception {
        Process p = new ProcessBuilder("stat", "--format=%b", file.toString()).start();
        String out = new String(p.getInputStream().readAllBytes()).trim();
        if (p.waitFor() != 0) {
            throw new IllegalStateException("stat " + file + " failed: " + out);
        }
        return Long.parseLong(out) * 512;
    }
}
