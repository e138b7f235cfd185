package io.fastblock.gateway.iscsi.conformance;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Reads the verbose output of libiscsi's {@code iscsi-test-cu} and tells passed, failed and
 * skipped tests apart. CUnit itself counts a skipped test as passed: the suite marks a skip by
 * printing {@code [SKIPPED]} inside the test, so a test is skipped when such a line appears
 * before its result word. A test's result is the word {@code passed} or {@code FAILED} that
 * opens a line (or follows {@code Test: X ...}); {@code [FAILED]} log lines inside a test that
 * then passes are negative probes, not failures.
 */
public final class CunitOutput {
    public enum Outcome { PASSED, FAILED, SKIPPED }

    public record Result(String suite, String test, Outcome outcome, String detail) {
        @Override
        public String toString() {
            return suite + "." + test + " " + outcome + (detail.isEmpty() ? "" : " (" + detail + ")");
        }
    }

    private static final Pattern SUITE = Pattern.compile("^Suite: (\\S+)");
    private static final Pattern TEST = Pattern.compile("^\\s+Test: (\\S+) \\.\\.\\.(.*)$");
    private static final Pattern VERDICT = Pattern.compile("^(passed|FAILED)\\b");

    private CunitOutput() {
    }

    public static List<Result> parse(String output) {
        List<Result> results = new ArrayList<>();
        String suite = null;
        String test = null;
        boolean skipped = false;
        StringBuilder detail = new StringBuilder();
        for (String line : output.split("\n")) {
            Matcher s = SUITE.matcher(line);
            if (s.find()) {
                suite = s.group(1);
                continue;
            }
            Matcher t = TEST.matcher(line);
            if (t.find()) {
                test = t.group(1);
                skipped = false;
                detail.setLength(0);
                line = t.group(2);
            }
            if (test == null) {
                continue;
            }
            if (line.contains("[SKIPPED]")) {
                skipped = true;
            }
            if ((line.contains("[FAILED]") || line.contains("[SKIPPED]")) && detail.length() < 300) {
                detail.append(detail.length() > 0 ? " | " : "").append(line.strip());
            }
            Matcher v = VERDICT.matcher(line.strip());
            if (v.find()) {
                Outcome o = v.group(1).equals("FAILED") ? Outcome.FAILED : skipped ? Outcome.SKIPPED : Outcome.PASSED;
                results.add(new Result(suite, test, o, detail.toString()));
                test = null;
            }
        }
        return results;
    }

    public static long count(List<Result> results, Outcome o) {
        return results.stream().filter(r -> r.outcome() == o).count();
    }

    /** "conformance: N passed, N failed, N skipped", as the scorer prints it. */
    public static String summary(List<Result> results) {
        return String.format("conformance: %d passed, %d failed, %d skipped", count(results, Outcome.PASSED),
                count(results, Outcome.FAILED), count(results, Outcome.SKIPPED));
    }

    /** The failed tests, one per line. */
    public static String failures(List<Result> results) {
        return results.stream().filter(r -> r.outcome() == Outcome.FAILED).map(Result::toString)
                .collect(Collectors.joining("\n"));
    }
}
