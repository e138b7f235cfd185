package io.fastblock.storage.io;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/** What a test sees of this process's memory mappings. */
public final class Mappings {
    private Mappings() {
    }

    /** How many mappings of {@code file} (deleted or not) this process has: the lines of /proc/self/maps naming it. */
    public static long of(Path file) throws IOException {
        String name = file.toString();
        try (Stream<String> lines = Files.lines(Path.of("/proc/self/maps"))) {
            return lines.filter(l -> l.endsWith(" " + name) || l.endsWith(" " + name + " (deleted)")).count();
        }
    }
}
