package io.fastblock.local;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Configurations for test clusters on free ports, so tests never collide with each other or with {@code make up}. */
final class TestClusters {
    private TestClusters() {
    }

    static LocalClusterConfig onFreePorts(Path dataDir, String... extraArgs) {
        int storage = FreePorts.consecutive(3);
        int base = FreePorts.consecutive(3);
        List<String> args = new ArrayList<>(List.of("--data-dir=" + dataDir, "--zk-port=" + base,
                "--namenode-port=" + (base + 1), "--iscsi-port=" + (base + 2), "--storage-port=" + storage));
        args.addAll(List.of(extraArgs));
        return LocalClusterConfig.fromArgs(args.toArray(String[]::new));
    }
}
