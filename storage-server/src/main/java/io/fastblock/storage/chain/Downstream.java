package io.fastblock.storage.chain;

import io.fastblock.protocol.StorageMessage;
import io.fastblock.protocol.StorageResponse;
import io.fastblock.protocol.WriteRequest;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongFunction;

/** The links from a replica to other nodes of its chains: its successor, and the tail it copies from while joining. */
public interface Downstream {
    /** Completes when {@link #forward} to {@code nodeId} can be called (its address is known); often already done. */
    CompletableFuture<Void> prepare(String nodeId);

    /**
     * Sends the write to {@code nodeId}; writes to one successor leave in call order. Takes
     * ownership of the write's data. A failure to deliver completes with an IO_ERROR response
     * naming the successor, never exceptionally.
     */
    CompletableFuture<StorageResponse> forward(String nodeId, WriteRequest write);

    /** Sends any request built for a fresh request id to {@code nodeId}; failures complete with an IO_ERROR response. */
    default CompletableFuture<StorageResponse> call(String nodeId, LongFunction<StorageMessage> build) {
        return CompletableFuture.failedFuture(new UnsupportedOperationException("no calls on this link"));
    }
}
