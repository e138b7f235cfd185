package io.fastblock.storage.chain;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Sequence numbers assigned by a head: strictly increasing on this node, and seeded from the
 * wall clock (microseconds) so they keep increasing across restarts without persisted state.
 * A replica observes the sequences it receives, so when it becomes head after a failover its
 * numbers continue above those of the old head.
 */
public final class SequenceClock {
    private final AtomicLong last = new AtomicLong();

    public long next() {
        long now = System.currentTimeMillis() * 1000;
        return last.updateAndGet(prev -> Math.max(prev + 1, now));
    }

    /** The highest sequence this node has assigned or seen (0 right after a start). */
    public long current() {
        return last.get();
    }

    public void observe(long sequence) {
        last.accumulateAndGet(sequence, Math::max);
    }
}
