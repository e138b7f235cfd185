package io.fastblock.gateway.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.netty.channel.SelectStrategy;
import io.netty.util.IntSupplier;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class AnswerSpinTest {
    private static final long SPIN = 50_000;

    /** A clock that advances 10 µs every time it is read, so a 50 µs poll makes a few rounds. */
    private long now;
    private final AnswerSpin spin = new AnswerSpin(SPIN, 2, () -> now += 10_000);

    /** Ready counts the loop's epoll would return, one per poll; 0 once they run out. */
    private static final class Polls implements IntSupplier {
        final Deque<Integer> results;
        int calls;

        Polls(Integer... results) {
            this.results = new ArrayDeque<>(List.of(results));
        }

        @Override
        public int get() {
            calls++;
            Integer r = results.poll();
            return r == null ? 0 : r;
        }
    }

    @BeforeEach
    @AfterEach
    void forget() {
        AnswerSpin.forgetThreadState();
    }

    @Test
    void withTasksQueuedTheLoopLooksAtItsSocketsOnceAndRunsThemLikeNettysDefault() throws Exception {
        AnswerSpin.awaiting();
        Polls polls = new Polls(3);
        assertEquals(3, spin.calculateStrategy(polls, true));
        assertEquals(1, polls.calls);
    }

    @Test
    void withNoAnswerAwaitedTheLoopSleepsWithoutPolling() throws Exception {
        Polls polls = new Polls(1);
        assertEquals(SelectStrategy.SELECT, spin.calculateStrategy(polls, false));
        assertEquals(0, polls.calls);
    }

    @Test
    void withOneAnswerAwaitedTheLoopPollsUntilItComes() throws Exception {
        AnswerSpin.awaiting();
        Polls polls = new Polls(0, 0, 1);
        assertEquals(1, spin.calculateStrategy(polls, false));
        assertEquals(3, polls.calls);
    }

    @Test
    void withMoreAnswersAwaitedThanTheBoundTheLoopSleeps() throws Exception {
        AnswerSpin.awaiting();
        AnswerSpin.awaiting();
        AnswerSpin.awaiting();
        Polls polls = new Polls(1);
        assertEquals(SelectStrategy.SELECT, spin.calculateStrategy(polls, false));
        assertEquals(0, polls.calls);
        AnswerSpin.answered();
        assertEquals(1, spin.calculateStrategy(polls, false), "two awaited: within the bound");
    }

    /** A deep client queue merged into few storage requests (sequential writes) is not a reason to poll. */
    @Test
    void withMoreCommandsExecutingThanTheBoundTheLoopSleepsThoughFewAnswersAreAwaited() throws Exception {
        AnswerSpin.awaiting();
        AnswerSpin.commandStarted();
        AnswerSpin.commandStarted();
        AnswerSpin.commandStarted();
        Polls polls = new Polls(1);
        assertEquals(SelectStrategy.SELECT, spin.calculateStrategy(polls, false));
        assertEquals(0, polls.calls);
        AnswerSpin.commandEnded();
        assertEquals(1, spin.calculateStrategy(polls, false), "two commands: within the bound");
        assertEquals(2, AnswerSpin.commands());
    }

    @Test
    void aPollThatFindsNothingInTimeGivesUpAndBacksOffLongerAfterEachMissUntilAnAnswerComesInTime() throws Exception {
        AnswerSpin.awaiting();
        Polls nothing = new Polls();
        assertEquals(SelectStrategy.SELECT, spin.calculateStrategy(nothing, false));
        int pollsOfOneMiss = nothing.calls;
        assertEquals(5, pollsOfOneMiss, "polled for 50 µs of a clock read every 10 µs");
        // Miss 1: the next idle period sleeps at once; miss 2: the next two; miss 3: four.
        int[] expectedSkips = {1, 2, 4};
        for (int skips : expectedSkips) {
            for (int i = 0; i < skips; i++) {
                int before = nothing.calls;
                assertEquals(SelectStrategy.SELECT, spin.calculateStrategy(nothing, false));
                assertEquals(before, nothing.calls, "backing off: no poll");
            }
            int before = nothing.calls;
            assertEquals(SelectStrategy.SELECT, spin.calculateStrategy(nothing, false));
            assertEquals(before + pollsOfOneMiss, nothing.calls, "after the back-off it polls again");
        }
        for (int i = 0; i < 8; i++) {
            spin.calculateStrategy(nothing, false); // the 8 skips after miss 4
        }
        Polls answer = new Polls(0, 2);
        assertEquals(2, spin.calculateStrategy(answer, false), "an answer in time");
        assertEquals(SelectStrategy.SELECT, spin.calculateStrategy(nothing, false));
        int before = nothing.calls;
        assertEquals(SelectStrategy.SELECT, spin.calculateStrategy(nothing, false));
        assertEquals(before, nothing.calls, "a miss after a hit backs off one idle period again");
        assertEquals(SelectStrategy.SELECT, spin.calculateStrategy(nothing, false));
        assertEquals(before + pollsOfOneMiss, nothing.calls);
    }

    /** Polls with nothing to find and returns how many times the poll looked (0: it slept at once). */
    private static int pollsOfAMiss(AnswerSpin spin) throws Exception {
        Polls nothing = new Polls();
        assertEquals(SelectStrategy.SELECT, spin.calculateStrategy(nothing, false));
        return nothing.calls;
    }

    @Test
    void aPollThatMissesMakesTheNextOneLongerUpToTheBound() throws Exception {
        AnswerSpin upTo200 = new AnswerSpin(200_000, 2, () -> now += 10_000);
        AnswerSpin.awaiting();
        assertEquals(5, pollsOfAMiss(upTo200), "the first poll lasts 50 µs");
        assertEquals(0, pollsOfAMiss(upTo200), "then one idle period of back-off");
        assertEquals(10, pollsOfAMiss(upTo200), "100 µs");
        assertEquals(0, pollsOfAMiss(upTo200));
        assertEquals(0, pollsOfAMiss(upTo200));
        assertEquals(20, pollsOfAMiss(upTo200), "200 µs");
        for (int i = 0; i < 4; i++) {
            assertEquals(0, pollsOfAMiss(upTo200));
        }
        assertEquals(20, pollsOfAMiss(upTo200), "never more than the bound");
    }

    @Test
    void aPollGrowsAtOnceToTwiceASlowAnswersWaitAndShrinksSlowlyAfterQuickOnes() throws Exception {
        AnswerSpin upTo200 = new AnswerSpin(200_000, 2, () -> now += 10_000);
        AnswerSpin.awaiting();
        assertEquals(5, pollsOfAMiss(upTo200));
        assertEquals(0, pollsOfAMiss(upTo200));
        Polls late = new Polls(0, 0, 0, 0, 0, 0, 0, 1);
        assertEquals(1, upTo200.calculateStrategy(late, false), "found within the 100 µs poll");
        assertEquals(8, late.calls);
        Polls quick = new Polls(1);
        assertEquals(1, upTo200.calculateStrategy(quick, false));
        // The 80 µs answer set 160 µs; the 10 µs one took 1/16 off.
        assertEquals(15, pollsOfAMiss(upTo200), "150 µs, not 20");
        assertEquals(0, pollsOfAMiss(upTo200));
        Polls slow = new Polls(0, 0, 0, 0, 0, 0, 0, 0, 0, 1);
        assertEquals(1, upTo200.calculateStrategy(slow, false), "found at 100 µs of the 200 µs poll the miss made");
        assertEquals(10, slow.calls);
        assertEquals(20, pollsOfAMiss(upTo200), "twice 100 µs is the bound");
        assertEquals(0, pollsOfAMiss(upTo200));
        for (int i = 0; i < 40; i++) {
            assertEquals(1, upTo200.calculateStrategy(new Polls(1), false));
        }
        assertEquals(5, pollsOfAMiss(upTo200), "many quick answers bring it back to the 50 µs start, no lower");
    }

    @Test
    void aBoundBelowTheStartIsTheOnlyLength() throws Exception {
        AnswerSpin upTo30 = new AnswerSpin(30_000, 2, () -> now += 10_000);
        AnswerSpin.awaiting();
        assertEquals(3, pollsOfAMiss(upTo30));
        assertEquals(0, pollsOfAMiss(upTo30));
        assertEquals(3, pollsOfAMiss(upTo30), "not longer after the miss");
    }

    @Test
    void theBackOffIsBounded() throws Exception {
        AnswerSpin.awaiting();
        Polls nothing = new Polls();
        int polling = 0;
        for (int i = 0; i < 2_000; i++) {
            int before = nothing.calls;
            spin.calculateStrategy(nothing, false);
            if (nothing.calls > before) {
                polling++;
            }
        }
        // Seven polls with 1 + 2 + ... + 32 skips between them take 70 periods; from then on 64
        // skips follow every poll: one poll per 65 periods.
        assertEquals(7 + (2_000 - 70) / (AnswerSpin.MAX_BACKOFF + 1), polling);
    }

    @Test
    void zeroSpinTurnsPollingOff() throws Exception {
        AnswerSpin off = new AnswerSpin(0, 2, System::nanoTime);
        AnswerSpin.awaiting();
        Polls polls = new Polls(1);
        assertEquals(SelectStrategy.SELECT, off.calculateStrategy(polls, false));
        assertEquals(0, polls.calls);
    }

    @Test
    void negativeSettingsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> new AnswerSpin(-1, 2, System::nanoTime));
        assertThrows(IllegalArgumentException.class, () -> new AnswerSpin(1, -2, System::nanoTime));
    }
}
