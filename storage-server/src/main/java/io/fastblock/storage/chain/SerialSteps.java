package io.fastblock.storage.chain;

import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Runs asynchronous steps one after another in submission order: a step starts when the previous
 * one's future has completed (either way). A replica admits a group's writes through one of these,
 * so a write that must wait (a ZooKeeper refresh, room in the sent list) holds back the writes
 * that arrived after it instead of letting them overtake it.
 */
final class SerialSteps {
    private CompletableFuture<?> last = CompletableFuture.completedFuture(null);

    synchronized <T> CompletableFuture<T> submit(Supplier<CompletableFuture<T>> step) {
        if (last.isDone()) {
            // Nothing to wait for (the usual case): run the step now, without two stages around it.
            CompletableFuture<T> now;
            try {
                now = step.get();
            } catch (RuntimeException e) {
                now = CompletableFuture.failedFuture(e);
            }
            last = now;
            return now;
        }
        CompletableFuture<T> next = last.handle((ignored, err) -> null).thenCompose(ignored -> {
            try {
                return step.get();
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(e);
            }
        });
        last = next;
        return next;
    }
}
