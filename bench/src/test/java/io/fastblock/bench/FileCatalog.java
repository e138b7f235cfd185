package io.fastblock.bench;

import io.fastblock.gateway.iscsi.TargetAccess;
import io.fastblock.gateway.iscsi.TargetCatalog;
import io.fastblock.gateway.scsi.BlockDevice;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/** Targets backed by files (one per IQN), with optional access rules, for the load generator's tests. */
final class FileCatalog implements TargetCatalog {
    private final Map<String, Path> files;
    private final Map<String, TargetAccess> rules;
    private final long size;

    FileCatalog(Map<String, Path> files, Map<String, TargetAccess> rules, long size) {
        this.files = files;
        this.rules = rules;
        this.size = size;
    }

    @Override
    public CompletableFuture<List<String>> targetNames(String initiatorName) {
        return CompletableFuture.completedFuture(files.keySet().stream().sorted().toList());
    }

    @Override
    public CompletableFuture<TargetAccess> access(String targetName, String initiatorName) {
        return CompletableFuture.completedFuture(rules.getOrDefault(targetName, TargetAccess.OPEN));
    }

    @Override
    public CompletableFuture<Optional<BlockDevice>> open(String targetName, String initiatorName) {
        Path p = files.get(targetName);
        if (p == null) {
            return CompletableFuture.completedFuture(Optional.empty());
        }
        return CompletableFuture.supplyAsync(() -> {
            try {
                return Optional.of(new FileVolume(p, size, targetName.substring(targetName.indexOf(':') + 1)));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }
}
