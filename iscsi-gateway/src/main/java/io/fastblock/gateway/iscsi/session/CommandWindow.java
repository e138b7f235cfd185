package io.fastblock.gateway.iscsi.session;

import java.util.HashMap;
import java.util.Map;

/**
 * The session's CmdSN window (RFC 7143 section 4.2.2.1): non-immediate commands are delivered in
 * CmdSN order; commands outside [ExpCmdSN, MaxCmdSN] and duplicates are ignored; immediate
 * commands bypass it. Serial number arithmetic throughout.
 *
 * <p>The window bounds the commands a session has in the gateway, not only those waiting for their
 * turn: MaxCmdSN = ExpCmdSN + depth - 1 - held, where a delivered command holds a slot
 * ({@link #hold}) until it is answered or aborted ({@link #free}). So a session never has more than
 * {@code depth} SCSI commands (and their data) in the gateway, whatever the initiator's own queue,
 * and the window reopens with the answers, which carry the new MaxCmdSN. Delivering a command moves
 * ExpCmdSN and the held count together, so MaxCmdSN never goes back (an initiator ignores a smaller
 * one, section 4.2.2.1, and would send what the window no longer takes).
 * Not thread-safe: used from the connection's event loop only.
 */
public final class CommandWindow {
    /** A command waiting for its turn. */
    public interface Deliverable {
        void deliver();

        /** Dropped without delivery (connection closed): release what it holds. */
        void discard();
    }

    private final int depth;
    private int expCmdSN;
    /** Delivered commands not answered yet (see {@link #hold}). */
    private int held;
    /** Slots of answered commands kept closed (see {@link #withhold}). */
    private int withheld;
    private final Map<Integer, Deliverable> early = new HashMap<>();

    public CommandWindow(int initialCmdSN, int depth) {
        this.expCmdSN = initialCmdSN;
        this.depth = depth;
    }

    public int expCmdSN() {
        return expCmdSN;
    }

    public int maxCmdSN() {
        return expCmdSN + depth - 1 - held - withheld;
    }

    /** True when {@code cmdSN} lies in [ExpCmdSN, MaxCmdSN] (serial arithmetic). */
    public boolean inWindow(int cmdSN) {
        int d = cmdSN - expCmdSN;
        return d >= 0 && d < depth - held - withheld;
    }

    /**
     * A command just delivered (its CmdSN consumed) stays in the gateway until {@link #free}:
     * call from its delivery, so MaxCmdSN does not move.
     */
    public void hold() {
        if (held + withheld >= depth) {
            throw new IllegalStateException("more commands held than the window's depth " + depth);
        }
        held++;
    }

    /** A held command was answered or aborted: the window reopens by one. */
    public void free() {
        if (held <= 0) {
            throw new IllegalStateException("no command held");
        }
        held--;
    }

    /**
     * A held command was answered, but its slot stays closed (the gateway is short of memory):
     * MaxCmdSN does not move until {@link #reopen}.
     */
    public void withhold() {
        if (held <= 0) {
            throw new IllegalStateException("no command held");
        }
        held--;
        withheld++;
    }

    /** Opens the slots kept closed by {@link #withhold}; returns how many (MaxCmdSN moves by that). */
    public int reopen() {
        int n = withheld;
        withheld = 0;
        return n;
    }

    public int withheld() {
        return withheld;
    }

    /** Delivered commands not answered yet. */
    public int held() {
        return held;
    }

    /**
     * Offers a command: delivered now (with any queued successors) when it is the next one,
     * queued when it is ahead, discarded when outside the window or a duplicate.
     *
     * @return false when the command was ignored
     */
    public boolean offer(int cmdSN, Deliverable command) {
        if (!inWindow(cmdSN) || early.containsKey(cmdSN)) {
            command.discard();
            return false;
        }
        if (cmdSN != expCmdSN) {
            early.put(cmdSN, command);
            return true;
        }
        expCmdSN++;
        command.deliver();
        Deliverable next;
        while ((next = early.remove(expCmdSN)) != null) {
            expCmdSN++;
            next.deliver();
        }
        return true;
    }

    public int queued() {
        return early.size();
    }

    public void discardAll() {
        early.values().forEach(Deliverable::discard);
        early.clear();
    }
}
