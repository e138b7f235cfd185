package io.fastblock.gateway.iscsi;

import io.fastblock.gateway.scsi.BlockDevice;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Which targets exist and how to open one. Asynchronous because answers come from the namenode;
 * the iSCSI layer must never block its event loop waiting for them.
 */
public interface TargetCatalog {
    /** IQNs of the targets {@code initiatorName} may discover. */
    CompletableFuture<List<String>> targetNames(String initiatorName);

    /**
     * Opens the target's logical unit 0 for {@code initiatorName}; empty when no such target
     * exists. Fails with a {@link io.fastblock.gateway.scsi.DeviceException} when the catalog
     * cannot be reached.
     */
    CompletableFuture<Optional<BlockDevice>> open(String targetName, String initiatorName);

    /**
     * Whether {@code initiatorName} may log in to {@code targetName} and which CHAP credentials
     * it must present. Asked before {@link #open} on every normal login and, for each discoverable
     * target, by SendTargets. The default is open access without CHAP.
     */
    default CompletableFuture<TargetAccess> access(String targetName, String initiatorName) {
        return CompletableFuture.completedFuture(TargetAccess.OPEN);
    }
}
