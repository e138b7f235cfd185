package io.fastblock.gateway.iscsi.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class CommandWindowTest {
    final List<String> log = new ArrayList<>();

    CommandWindow.Deliverable cmd(String name) {
        return new CommandWindow.Deliverable() {
            @Override
            public void deliver() {
                log.add(name);
            }

            @Override
            public void discard() {
                log.add("x" + name);
            }
        };
    }

    @Test
    void deliversInCmdSnOrder() {
        CommandWindow w = new CommandWindow(10, 4);
        assertEquals(13, w.maxCmdSN());
        assertTrue(w.offer(12, cmd("c12")));
        assertTrue(w.offer(11, cmd("c11")));
        assertEquals(List.of(), log);
        assertTrue(w.offer(10, cmd("c10")));
        assertEquals(List.of("c10", "c11", "c12"), log);
        assertEquals(13, w.expCmdSN());
        assertEquals(16, w.maxCmdSN());
    }

    @Test
    void ignoresCommandsOutsideTheWindowAndDuplicates() {
        CommandWindow w = new CommandWindow(10, 4);
        assertFalse(w.offer(9, cmd("low")));
        assertFalse(w.offer(14, cmd("high")));
        assertTrue(w.offer(11, cmd("a")));
        assertFalse(w.offer(11, cmd("dup")));
        assertEquals(List.of("xlow", "xhigh", "xdup"), log);
        assertEquals(10, w.expCmdSN());
    }

    @Test
    void serialArithmeticWrapsAround() {
        CommandWindow w = new CommandWindow(0xffffffff, 4);
        assertTrue(w.inWindow(0xffffffff));
        assertTrue(w.inWindow(2));
        assertFalse(w.inWindow(3));
        assertFalse(w.inWindow(0xfffffffe));
        w.offer(0xffffffff, cmd("a"));
        w.offer(0, cmd("b"));
        assertEquals(1, w.expCmdSN());
        assertEquals(List.of("a", "b"), log);
    }

    @Test
    void discardAllReleasesQueuedCommands() {
        CommandWindow w = new CommandWindow(1, 8);
        w.offer(3, cmd("c3"));
        w.offer(5, cmd("c5"));
        w.discardAll();
        assertEquals(2, log.size());
        assertEquals(0, w.queued());
    }

    @Test
    void heldCommandsCloseTheWindowUntilFreed() {
        CommandWindow w = new CommandWindow(10, 4);
        for (int cmdSN = 10; cmdSN < 14; cmdSN++) {
            assertTrue(w.offer(cmdSN, holding(w, "c" + cmdSN)));
            assertEquals(13, w.maxCmdSN(), "delivering and holding together leave MaxCmdSN where it was");
        }
        assertEquals(14, w.expCmdSN());
        assertEquals(4, w.held());
        assertEquals(13, w.maxCmdSN(), "closed: ExpCmdSN - 1");
        assertFalse(w.offer(14, cmd("c14")), "no room while four are held");
        w.free();
        assertEquals(14, w.maxCmdSN());
        assertTrue(w.offer(14, holding(w, "c14")));
        assertEquals(List.of("c10", "c11", "c12", "c13", "xc14", "c14"), log);
    }

    @Test
    void maxCmdSnNeverGoesBack() {
        java.util.Random r = new java.util.Random(7);
        CommandWindow w = new CommandWindow(-3, 16);
        int next = -3;
        int held = 0;
        int last = w.maxCmdSN();
        for (int i = 0; i < 20_000; i++) {
            int op = r.nextInt(5);
            if (op == 0 && w.inWindow(next)) {
                w.offer(next++, holding(w, "h"));
                held++;
            } else if (op == 1 && w.inWindow(next)) {
                w.offer(next++, cmd("n")); // a CmdSN consumed without a slot (a NOP-Out, a rejected command)
            } else if (op == 2 && held > 0) {
                w.free();
                held--;
            } else if (op == 3 && held > 0) {
                w.withhold(); // answered while the gateway is short of memory
                held--;
            } else if (op == 4 && r.nextInt(4) == 0) {
                w.reopen();
            }
            int max = w.maxCmdSN();
            assertTrue(max - last >= 0, "MaxCmdSN went back from " + last + " to " + max);
            assertTrue(w.held() <= 16 && max - w.expCmdSN() + 1 + w.held() + w.withheld() == 16,
                    "open, held and withheld slots make up the depth");
            last = max;
        }
        log.clear();
    }

    @Test
    void withheldSlotsStayClosedUntilReopened() {
        CommandWindow w = new CommandWindow(10, 4);
        for (int cmdSN = 10; cmdSN < 12; cmdSN++) {
            w.offer(cmdSN, holding(w, "c" + cmdSN));
        }
        assertEquals(13, w.maxCmdSN(), "two held: MaxCmdSN did not move with delivery");
        w.withhold();
        assertEquals(13, w.maxCmdSN(), "answered, but the slot stays closed");
        assertEquals(1, w.withheld());
        assertTrue(w.inWindow(13));
        assertFalse(w.inWindow(14));
        w.offer(12, holding(w, "c12"));
        w.offer(13, holding(w, "c13"));
        assertEquals(13, w.maxCmdSN());
        assertFalse(w.inWindow(14), "three held and one withheld: closed");
        org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, w::hold, "no slot left to hold");
        w.free();
        assertEquals(14, w.maxCmdSN(), "a normal answer reopens its slot");
        assertEquals(1, w.reopen());
        assertEquals(15, w.maxCmdSN(), "the withheld slot opens");
        assertEquals(0, w.reopen());
        log.clear();
    }

    @Test
    void holdingMoreThanTheDepthOrFreeingNothingIsABug() {
        CommandWindow w = new CommandWindow(1, 2);
        w.hold();
        w.hold();
        org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, w::hold);
        w.free();
        w.free();
        org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, w::free);
    }

    /** A command that holds a slot once delivered, as a SCSI command does. */
    CommandWindow.Deliverable holding(CommandWindow w, String name) {
        return new CommandWindow.Deliverable() {
            @Override
            public void deliver() {
                w.hold();
                log.add(name);
            }

            @Override
            public void discard() {
                log.add("x" + name);
            }
        };
    }
}
