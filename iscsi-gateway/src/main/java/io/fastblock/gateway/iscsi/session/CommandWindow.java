package io.fastblock.gateway.iscsi.session;

import java.util.HashMap;
import java.util.Map;

/**
 * The session's CmdSN window (RFC 7143 section 4.2.2.1): non-immediate commands are delivered in
 * CmdSN order; commands outside [ExpCmdSN, MaxCmdSN] and duplicates are ignored; immediate
 * commands bypass it. MaxCmdSN = ExpCmdSN + depth - 1. Serial number arithmetic throughout.
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
    private final Map<Integer, Deliverable> early = new HashMap<>();

    public CommandWindow(int initialCmdSN, int depth) {
        this.expCmdSN = initialCmdSN;
        this.depth = depth;
    }

    public int expCmdSN() {
        return expCmdSN;
    }

    public int maxCmdSN() {
        return expCmdSN + depth - 1;
    }

    /** True when {@code cmdSN} lies in [ExpCmdSN, MaxCmdSN] (serial arithmetic). */
    public boolean inWindow(int cmdSN) {
        int d = cmdSN - expCmdSN;
        return d >= 0 && d < depth;
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
