package io.fastblock.storage.chain;

import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.WriteRequest;
import java.util.concurrent.CompletableFuture;

/** The link from a replica to its successor in a chain. */
public interface Downstream {
    /** Completes when {@link #forward} to {@code nodeId} can be called (its address is known); often already done. */
    CompletableFuture<Void> prepare(String nodeId);

    /**
     * Sends the write to {@code nodeId}; writes to one successor leave in call order. Takes
     * ownership of the write's data. A failure to deliver completes with an IO_ERROR response
     * naming the successor, never exceptionally.
     */
    CompletableFuture<StorageResponse> forward(String nodeId, WriteRequest write);
}
