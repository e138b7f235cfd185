package io.fastblock.storage.chain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class SerialStepsTest {
    @Test
    void aStepWithNothingBeforeItRunsAtOnce() {
        SerialSteps steps = new SerialSteps();
        List<String> ran = new ArrayList<>();
        CompletableFuture<String> f = steps.submit(() -> {
            ran.add("a");
            return CompletableFuture.completedFuture("a");
        });
        assertEquals(List.of("a"), ran);
        assertEquals("a", f.join());
    }

    @Test
    void aWaitingStepHoldsBackLaterOnesUntilItCompletes() {
        SerialSteps steps = new SerialSteps();
        List<String> ran = new ArrayList<>();
        CompletableFuture<Void> gate = new CompletableFuture<>();
        steps.submit(() -> {
            ran.add("first");
            return gate;
        });
        CompletableFuture<String> second = steps.submit(() -> {
            ran.add("second");
            return CompletableFuture.completedFuture("second");
        });
        CompletableFuture<String> third = steps.submit(() -> {
            ran.add("third");
            return CompletableFuture.completedFuture("third");
        });
        assertEquals(List.of("first"), ran);
        assertFalse(second.isDone());
        gate.complete(null);
        assertEquals(List.of("first", "second", "third"), ran);
        assertEquals("third", third.join());
    }

    @Test
    void aFailedOrThrowingStepDoesNotStopTheNext() {
        SerialSteps steps = new SerialSteps();
        CompletableFuture<String> thrown = steps.submit(() -> {
            throw new IllegalStateException("refused");
        });
        assertTrue(thrown.isCompletedExceptionally());
        CompletableFuture<Void> failing = new CompletableFuture<>();
        steps.submit(() -> failing);
        CompletableFuture<String> after = steps.submit(() -> CompletableFuture.completedFuture("after"));
        assertFalse(after.isDone());
        failing.completeExceptionally(new RuntimeException("io"));
        assertEquals("after", after.join());
    }
}
