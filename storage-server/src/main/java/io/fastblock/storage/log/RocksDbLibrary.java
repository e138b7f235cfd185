package io.fastblock.storage.log;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.rocksdb.RocksDB;
import org.rocksdb.util.Environment;

/**
 * Loads RocksDB's native library without leaving a copy of it behind. RocksDB's own loader
 * extracts the 14 MiB library into {@code java.io.tmpdir} at every start and deletes it only when
 * the JVM exits normally, so every storage server that was killed (kill -9, an out-of-memory exit,
 * a crash) left one: 1,097 of them, 15 GB, had filled this project's build machine to 91%, which
 * put every log cleaner on it under space pressure. Here the copy goes into a directory of its own
 * that is removed as soon as the library is loaded (Linux keeps a loaded library mapped).
 */
final class RocksDbLibrary {
    private static boolean loaded;

    private RocksDbLibrary() {
    }

    static synchronized void load() {
        if (loaded) {
            return;
        }
        // The jar holds the library as RocksDB's own loader names it; loadLibrary(paths) looks in each
        // directory for another name (librocksdbjnijni-linux64.so in 9.7), and when that fails it falls
        // back to extracting into the temporary directory, which RocksDbLibraryTest would see.
        String name = Environment.getJniLibraryFileName("rocksdb");
        String loadedAs = Environment.getJniLibraryFileName("rocksdbjni");
        try (InputStream in = RocksDB.class.getClassLoader().getResourceAsStream(name)) {
            if (in == null) {
                RocksDB.loadLibrary(); // not in the jar (a system-installed library): RocksDB finds it
            } else {
                Path dir = Files.createTempDirectory("fastblock-rocksdb");
                Path copy = dir.resolve(loadedAs);
                try {
                    Files.copy(in, copy);
                    RocksDB.loadLibrary(List.of(dir.toString()));
                } finally {
                    Files.deleteIfExists(copy);
                    Files.deleteIfExists(dir);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot extract RocksDB's native library " + name, e);
        }
        loaded = true;
    }
}
