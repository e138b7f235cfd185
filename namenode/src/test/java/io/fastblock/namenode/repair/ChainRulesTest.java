package io.fastblock.namenode.repair;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.fastblock.protocol.meta.GroupRecord;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Chain replication's rules, for every position and every combination of failures. */
class ChainRulesTest {
    private static final List<String> CHAIN = List.of("h", "m", "t");

    @Test
    void headFailureMakesTheNextTheHead() {
        GroupRecord g = ChainRules.remove(new GroupRecord(1, 7, CHAIN), Set.of("h"));
        assertEquals(List.of("m", "t"), g.members());
        assertEquals("m", g.head());
        assertEquals(8, g.chainVersion());
    }

    @Test
    void tailFailureMakesTheMiddleTheTail() {
        GroupRecord g = ChainRules.remove(new GroupRecord(1, 7, CHAIN), Set.of("t"));
        assertEquals(List.of("h", "m"), g.members());
        assertEquals("m", g.tail());
        assertEquals(8, g.chainVersion());
    }

    @Test
    void middleFailureLinksHeadToTail() {
        GroupRecord g = ChainRules.remove(new GroupRecord(1, 7, CHAIN), Set.of("m"));
        assertEquals(List.of("h", "t"), g.members());
        assertEquals(8, g.chainVersion());
    }

    @Test
    void everyCombinationOfFailuresOnEveryChainLength() {
        for (int length = 1; length <= 3; length++) {
            List<String> chain = CHAIN.subList(0, length);
            for (String joining : new String[] {null, "j"}) {
                List<String> all = new ArrayList<>(chain);
                if (joining != null) {
                    all.add(joining);
                }
                for (int mask = 0; mask < (1 << all.size()); mask++) {
                    Set<String> failed = new HashSet<>();
                    for (int b = 0; b < all.size(); b++) {
                        if ((mask & (1 << b)) != 0) {
                            failed.add(all.get(b));
                        }
                    }
                    GroupRecord before = new GroupRecord(4, 10, chain, joining);
                    GroupRecord after = ChainRules.remove(before, failed);
                    String what = chain + " joining " + joining + " failed " + failed;
                    List<String> survivors = chain.stream().filter(m -> !failed.contains(m)).toList();
                    boolean memberLost = survivors.size() < chain.size();
                    if (survivors.isEmpty()) {
                        assertEquals(chain, after.members(), what + ": the last members are kept");
                        assertEquals(10, after.chainVersion(), what);
                    } else {
                        assertEquals(survivors, after.members(), what + ": survivors keep their order");
                        assertEquals(memberLost ? 11 : 10, after.chainVersion(), what + ": one bump per change");
                    }
                    assertEquals(joining != null && !failed.contains(joining) ? joining : null, after.joining(), what);
                    assertEquals(4, after.id());
                    if (failed.isEmpty()) {
                        assertSame(before, after, what);
                    }
                }
            }
        }
    }

    @Test
    void aJoinAppendsAtTheTailWithOneBump() {
        for (int length = 1; length <= 3; length++) {
            List<String> chain = CHAIN.subList(0, length);
            GroupRecord joining = ChainRules.startJoin(new GroupRecord(2, 5, chain), "n");
            assertEquals(5, joining.chainVersion(), "naming a joining node does not change the chain");
            assertEquals("n", joining.joining());
            GroupRecord done = ChainRules.completeJoin(joining, null);
            List<String> expected = new ArrayList<>(chain);
            expected.add("n");
            assertEquals(expected, done.members());
            assertEquals("n", done.tail());
            assertEquals(6, done.chainVersion());
            assertNull(done.joining());
        }
    }

    @Test
    void aDrainedMemberLeavesInTheSameChangeFromEveryPosition() {
        for (String leaving : CHAIN) {
            GroupRecord joining = ChainRules.startJoin(new GroupRecord(2, 5, CHAIN), "n");
            GroupRecord done = ChainRules.completeJoin(joining, leaving);
            List<String> expected = new ArrayList<>(CHAIN);
            expected.remove(leaving);
            expected.add("n");
            assertEquals(expected, done.members(), "leaving " + leaving);
            assertEquals(6, done.chainVersion());
        }
    }

    @Test
    void joinsAreRefusedWhenTheyMakeNoSense() {
        GroupRecord g = new GroupRecord(2, 5, CHAIN);
        assertThrows(IllegalArgumentException.class, () -> ChainRules.startJoin(g, "m"));
        assertThrows(IllegalStateException.class, () -> ChainRules.startJoin(ChainRules.startJoin(g, "n"), "o"));
        assertThrows(IllegalStateException.class, () -> ChainRules.completeJoin(g, null));
        GroupRecord abandoned = ChainRules.abandonJoin(ChainRules.startJoin(g, "n"));
        assertEquals(g, abandoned);
        assertSame(g, ChainRules.abandonJoin(g));
    }
}
