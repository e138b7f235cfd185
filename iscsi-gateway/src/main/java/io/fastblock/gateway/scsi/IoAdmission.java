package io.fastblock.gateway.scsi;

import java.util.concurrent.CompletableFuture;

/**
 * Decides when a data command of a logical unit may start (per-volume QoS). The SCSI layer asks
 * before every read or write command; the future completes when the command may go.
 */
public interface IoAdmission {
    /** Admits everything at once. */
    IoAdmission NONE = new IoAdmission() {
        @Override
        public CompletableFuture<Void> admit(boolean read, long bytes) {
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public boolean unlimited() {
            return true;
        }
    };

    /** When a command moving {@code bytes} (data-in for a read, data-out for a write) may start. */
    CompletableFuture<Void> admit(boolean read, long bytes);

    /** True when {@link #admit} never delays, so the caller may skip it. */
    boolean unlimited();
}
