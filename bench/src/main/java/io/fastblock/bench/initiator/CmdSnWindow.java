package io.fastblock.bench.initiator;

/**
 * The initiator's view of the session's command window (RFC 7143 section 4.2.2.1): the CmdSN the
 * next non-immediate command takes, and the target's ExpCmdSN/MaxCmdSN as last reported. A command
 * may be sent only while its CmdSN is at most MaxCmdSN; everything is 32-bit serial arithmetic.
 */
public final class CmdSnWindow {
    private int next;
    private int expCmdSN;
    private int maxCmdSN;

    /** Starts with {@code firstCmdSN} as the next CmdSN and the window the final login response gave. */
    public CmdSnWindow(int firstCmdSN, int expCmdSN, int maxCmdSN) {
        this.next = firstCmdSN;
        this.expCmdSN = expCmdSN;
        this.maxCmdSN = maxCmdSN;
    }

    /** True when serial number {@code a} is less than {@code b} (RFC 1982, 32 bits). */
    public static boolean lessThan(int a, int b) {
        return a != b && (a - b) < 0;
    }

    /** True when a non-immediate command may be sent now. */
    public boolean open() {
        return !lessThan(maxCmdSN, next);
    }

    /** Commands that may still be sent before the window closes. */
    public int room() {
        int r = maxCmdSN - next + 1;
        return Math.max(r, 0);
    }

    /** Takes the CmdSN for a non-immediate command; the caller must have checked {@link #open()}. */
    public int take() {
        if (!open()) {
            throw new IllegalStateException("CmdSN " + next + " is beyond MaxCmdSN " + maxCmdSN);
        }
        return next++;
    }

    /** The CmdSN an immediate PDU carries (it does not advance). */
    public int current() {
        return next;
    }

    /**
     * Applies the ExpCmdSN/MaxCmdSN of a target PDU: both are ignored when MaxCmdSN < ExpCmdSN - 1,
     * and each only ever moves forward, so a stale PDU cannot shrink the window.
     */
    public void update(int pduExpCmdSN, int pduMaxCmdSN) {
        if (lessThan(pduMaxCmdSN, pduExpCmdSN - 1)) {
            return;
        }
        if (lessThan(maxCmdSN, pduMaxCmdSN)) {
            maxCmdSN = pduMaxCmdSN;
        }
        if (lessThan(expCmdSN, pduExpCmdSN)) {
            expCmdSN = pduExpCmdSN;
        }
    }

    public int expCmdSN() {
        return expCmdSN;
    }

    public int maxCmdSN() {
        return maxCmdSN;
    }

    @Override
    public String toString() {
        return "CmdSnWindow[next=" + Integer.toUnsignedString(next) + " exp=" + Integer.toUnsignedString(expCmdSN)
                + " max=" + Integer.toUnsignedString(maxCmdSN) + "]";
    }
}
