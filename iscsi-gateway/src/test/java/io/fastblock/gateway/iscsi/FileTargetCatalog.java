package io.fastblock.gateway.iscsi;

import io.fastblock.gateway.scsi.BlockDevice;
import io.fastblock.gateway.scsi.FileBlockDevice;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/** A test catalog: one IQN per file, each open() opening a fresh {@link FileBlockDevice}. */
public final class FileTargetCatalog implements TargetCatalog {
    private final Map<String, Path> targets;
    private final long size;
    public final List<FileBlockDevice> opened = new CopyOnWriteArrayList<>();
    /** Access rules by target name (absent: open); change between logins as a test needs. */
    public final Map<String, TargetAccess> rules = new ConcurrentHashMap<>();
    /** Whether opened devices are thin provisioned (unmap punches holes). */
    public volatile boolean thin;

    /** Lets every read and write held by a test's {@code FileBlockDevice.hold} latch go on (before closing a server). */
    public void releaseHolds() {
        opened.forEach(d -> {
            java.util.concurrent.CountDownLatch h = d.hold;
            if (h != null) {
                h.countDown();
            }
        });
    }

    public FileTargetCatalog(Map<String, Path> targets, long size) {
        this.targets = targets;
        this.size = size;
    }

    @Override
    public CompletableFuture<List<String>> targetNames(String initiatorName) {
        return CompletableFuture.completedFuture(targets.keySet().stream().sorted().toList());
    }

    @Override
    public CompletableFuture<TargetAccess> access(String targetName, String initiatorName) {
        return CompletableFuture.completedFuture(rules.getOrDefault(targetName, TargetAccess.OPEN));
    }

    @Override
    public CompletableFuture<Optional<BlockDevice>> open(String targetName, String initiatorName) {
        Path p = targets.get(targetName);
        if (p == null) {
            return CompletableFuture.completedFuture(Optional.empty());
        }
        return CompletableFuture.supplyAsync(() -> {
            try {
                FileBlockDevice d = new FileBlockDevice(p, size, 42, targetName.substring(targetName.indexOf(':') + 1))
                        .thin(thin);
                opened.add(d);
                return Optional.of(d);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }
}
