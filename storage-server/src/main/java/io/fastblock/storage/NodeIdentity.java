package io.fastblock.storage;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * A node's id lives in {@code <data-dir>/node-id} so it survives restarts: replication groups
 * name their members by id, and a data dir must never come back under another node's name.
 */
public final class NodeIdentity {
    private static final Pattern VALID = Pattern.compile("^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$");
    public static final String FILE = "node-id";

    private NodeIdentity() {
    }

    public static void validate(String id) {
        if (!VALID.matcher(id).matches()) {
            throw new IllegalArgumentException("node id '" + id + "' must match " + VALID.pattern());
        }
    }

    /** The id to run as; refuses a given id that differs from the one recorded in the data dir. */
    public static String resolve(Path dataDir, String given) throws IOException {
        Files.createDirectories(dataDir);
        Path file = dataDir.resolve(FILE);
        if (Files.exists(file)) {
            String stored = Files.readString(file, StandardCharsets.UTF_8).trim();
            if (given != null && !given.equals(stored)) {
                throw new IllegalStateException("data dir " + dataDir + " belongs to node '" + stored
                        + "', refusing to start as '" + given + "'");
            }
            validate(stored);
            return stored;
        }
        String id = given != null ? given : "storage-" + UUID.randomUUID().toString().substring(0, 8);
        Path tmp = dataDir.resolve(FILE + ".tmp");
        Files.writeString(tmp, id + "\n", StandardCharsets.UTF_8);
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        return id;
    }
}
