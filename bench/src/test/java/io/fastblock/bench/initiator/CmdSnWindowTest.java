package io.fastblock.bench.initiator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class CmdSnWindowTest {
    @Test
    void neverTakesACmdSnBeyondMaxCmdSn() {
        CmdSnWindow w = new CmdSnWindow(10, 10, 12);
        assertEquals(3, w.room());
        assertEquals(10, w.take());
        assertEquals(11, w.take());
        assertEquals(12, w.take());
        assertFalse(w.open());
        assertEquals(0, w.room());
        assertThrows(IllegalStateException.class, w::take);
        assertEquals(13, w.current(), "immediate PDUs carry the next CmdSN without taking it");
        w.update(11, 13);
        assertTrue(w.open());
        assertEquals(13, w.take());
    }

    @Test
    void aClosedWindowStaysClosedUntilTheTargetOpensIt() {
        CmdSnWindow w = new CmdSnWindow(5, 5, 4); // MaxCmdSN = ExpCmdSN - 1: closed
        assertFalse(w.open());
        w.update(5, 4);
        assertFalse(w.open());
        w.update(5, 5);
        assertTrue(w.open());
    }

    @Test
    void staleOrInvalidUpdatesAreIgnored() {
        CmdSnWindow w = new CmdSnWindow(1, 1, 32);
        w.update(1, 20); // an older PDU must not shrink the window
        assertEquals(32, w.maxCmdSN());
        w.update(40, 35); // MaxCmdSN < ExpCmdSN - 1: both ignored
        assertEquals(1, w.expCmdSN());
        assertEquals(32, w.maxCmdSN());
        w.update(8, 40);
        assertEquals(8, w.expCmdSN());
        assertEquals(40, w.maxCmdSN());
    }

    @Test
    void serialArithmeticAcrossTheWrap() {
        int start = 0xfffffffe;
        CmdSnWindow w = new CmdSnWindow(start, start, start + 3); // max wraps to 1
        assertEquals(4, w.room());
        assertEquals(0xfffffffe, w.take());
        assertEquals(0xffffffff, w.take());
        assertEquals(0, w.take());
        assertEquals(1, w.take());
        assertFalse(w.open());
        w.update(2, 5);
        assertEquals(2, w.expCmdSN());
        assertEquals(4, w.room());
        assertTrue(CmdSnWindow.lessThan(0xffffffff, 0));
        assertFalse(CmdSnWindow.lessThan(0, 0xffffffff));
    }
}
