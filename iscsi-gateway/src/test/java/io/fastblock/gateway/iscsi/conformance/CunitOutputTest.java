package io.fastblock.gateway.iscsi.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fastblock.gateway.iscsi.conformance.CunitOutput.Outcome;
import io.fastblock.gateway.iscsi.conformance.CunitOutput.Result;
import java.util.List;
import org.junit.jupiter.api.Test;

class CunitOutputTest {
    static final String SAMPLE = String.join("\n",
            "Suite: Read10",
            "  Test: Simple ...",
            "    Test READ10 of 1-256 blocks",
            "passed",
            "  Test: BeyondEol ...",
            "    [FAILED] READ10 successful but should have failed",
            "passed",
            "Suite: CompareAndWrite",
            "  Test: Simple ...",
            "    [SKIPPED] COMPAREANDWRITE is not implemented.",
            "passed",
            "  Test: Miscompare ...FAILED",
            "    1. test_compareandwrite_miscompare.c:80  - CU_FAIL",
            "Suite: iSCSITMF",
            "  Test: AbortTaskSimple ...passed    Send PRIN/READ_KEYS",
            "");

    @Test
    void separatesPassedFailedAndSkipped() {
        List<Result> r = CunitOutput.parse(SAMPLE);
        assertEquals(5, r.size());
        assertEquals(new Result("Read10", "Simple", Outcome.PASSED, ""), r.get(0));
        assertEquals(Outcome.PASSED, r.get(1).outcome(), "a [FAILED] probe inside a passing test");
        assertEquals(Outcome.SKIPPED, r.get(2).outcome());
        assertEquals(Outcome.FAILED, r.get(3).outcome());
        assertEquals("Miscompare", r.get(3).test());
        assertEquals(Outcome.PASSED, r.get(4).outcome(), "teardown text after the verdict");
        assertEquals(3, CunitOutput.count(r, Outcome.PASSED));
    }

    @Test
    void summarisesAsTheScorerDoesAndListsTheFailures() {
        List<Result> r = CunitOutput.parse(SAMPLE);
        assertEquals("conformance: 3 passed, 1 failed, 1 skipped", CunitOutput.summary(r));
        assertEquals(r.get(3).toString(), CunitOutput.failures(r));
    }
}
