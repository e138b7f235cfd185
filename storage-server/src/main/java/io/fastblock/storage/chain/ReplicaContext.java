package io.fastblock.storage.chain;

import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;

/** What every {@link GroupReplica} of a node shares. */
record ReplicaContext(String nodeId, GroupLookup groups, Downstream downstream, ReplicaStorage storage,
                      GroupChunks chunks, ChainMetrics metrics, SequenceClock clock, EpochFence fence,
                      ChainLimits limits, ScheduledExecutorService scheduler, Executor blocking,
                      io.fastblock.storage.io.ByteRateLimiter copyLimiter, DirectAnswers answers) {
    /** Completes once the node's copy budget allows {@code bytes} more (catch-up pieces wait here, no thread sleeps). */
    java.util.concurrent.CompletableFuture<Void> paced(long bytes) {
        long wait = copyLimiter.delayNanos(bytes);
        if (wait <= 0) {
            return java.util.concurrent.CompletableFuture.completedFuture(null);
        }
        java.util.concurrent.CompletableFuture<Void> go = new java.util.concurrent.CompletableFuture<>();
        scheduler.schedule(() -> go.complete(null), wait, java.util.concurrent.TimeUnit.NANOSECONDS);
        return go;
    }
}
