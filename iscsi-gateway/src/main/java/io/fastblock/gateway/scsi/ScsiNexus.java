package io.fastblock.gateway.scsi;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * Per I_T nexus state (one per iSCSI session): who the initiator is (for reservations) and the
 * unit attentions it has yet to see. Unit attentions may be queued from other sessions' threads
 * (a LUN reset, a preempted reservation), hence the locking.
 */
public final class ScsiNexus {
    private final String initiatorName;
    private final long isid;
    private final Deque<Sense> unitAttentions = new ArrayDeque<>();

    public ScsiNexus(String initiatorName, long isid) {
        this.initiatorName = initiatorName;
        this.isid = isid;
        unitAttentions.add(Sense.POWER_ON_RESET);
    }

    /** A nexus for tests that do not care who it is. */
    public ScsiNexus() {
        this("iqn.invalid:anonymous", 0);
    }

    private volatile Runnable abortTasks = () -> { };

    /** How to abort every task of this nexus (set by the transport; used by PREEMPT AND ABORT). */
    public void onAbortRequest(Runnable action) {
        this.abortTasks = action;
    }

    void requestAbort() {
        abortTasks.run();
    }

    public String initiatorName() {
        return initiatorName;
    }

    public long isid() {
        return isid;
    }

    public synchronized Sense pendingUnitAttention() {
        return unitAttentions.peekFirst();
    }

    /** Queues {@code ua}; a duplicate of one already queued is not queued again. */
    public synchronized void unitAttention(Sense ua) {
        if (!unitAttentions.contains(ua) && unitAttentions.size() < 8) {
            unitAttentions.addLast(ua);
        }
    }

    public synchronized Sense takeUnitAttention() {
        return unitAttentions.pollFirst();
    }

    /** Forgets every pending unit attention (an I_T nexus loss makes them moot). */
    public synchronized void clearUnitAttentions() {
        unitAttentions.clear();
    }

    @Override
    public String toString() {
        return initiatorName + ",i,0x" + String.format("%012x", isid);
    }
}
