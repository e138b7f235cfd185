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
}
