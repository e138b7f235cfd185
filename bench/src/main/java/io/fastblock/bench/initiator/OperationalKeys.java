package io.fastblock.bench.initiator;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The operational keys we offer (RFC 7143 section 13) and how the target's answers turn into
 * {@link SessionParams}. We offer what makes writes cheap (immediate and unsolicited data, large
 * bursts and segments), digests off, ERL 0 and one connection.
 */
public final class OperationalKeys {
    public static final int OUR_MAX_RECV_DATA_SEGMENT_LENGTH = 262144;
    public static final int OFFERED_FIRST_BURST = 262144;
    public static final int OFFERED_MAX_BURST = 1048576;
    public static final int OFFERED_MAX_OUTSTANDING_R2T = 1;

    private OperationalKeys() {
    }

    /** The operational key offer for a normal session, in the order we send it. */
    public static List<Map.Entry<String, String>> offer() {
        List<Map.Entry<String, String>> keys = new ArrayList<>();
        keys.add(Map.entry("HeaderDigest", "None"));
        keys.add(Map.entry("DataDigest", "None"));
        keys.add(Map.entry("MaxConnections", "1"));
        keys.add(Map.entry("InitialR2T", "No"));
        keys.add(Map.entry("ImmediateData", "Yes"));
        keys.add(Map.entry("MaxRecvDataSegmentLength", Integer.toString(OUR_MAX_RECV_DATA_SEGMENT_LENGTH)));
        keys.add(Map.entry("MaxBurstLength", Integer.toString(OFFERED_MAX_BURST)));
        keys.add(Map.entry("FirstBurstLength", Integer.toString(OFFERED_FIRST_BURST)));
        keys.add(Map.entry("DefaultTime2Wait", "0"));
        keys.add(Map.entry("DefaultTime2Retain", "0"));
        keys.add(Map.entry("MaxOutstandingR2T", Integer.toString(OFFERED_MAX_OUTSTANDING_R2T)));
        keys.add(Map.entry("DataPDUInOrder", "Yes"));
        keys.add(Map.entry("DataSequenceInOrder", "Yes"));
        keys.add(Map.entry("ErrorRecoveryLevel", "0"));
        return keys;
    }

    /**
     * Folds the target's answers (possibly spread over several Login Responses, all merged into
     * {@code answers}) into the session parameters. Unanswered keys keep their RFC defaults combined
     * with our offer by the key's result function.
     *
     * @throws IllegalArgumentException when an answer is outside what the offer allows
     */
    public static SessionParams resolve(Map<String, String> answers) {
        // We offer InitialR2T=No (OR) and ImmediateData=Yes (AND), so the target's answer is the result;
        // a key left unanswered keeps the RFC default, the cautious reading.
        boolean initialR2T = yesNo(answers, "InitialR2T", true);
        boolean immediate = yesNo(answers, "ImmediateData", true);
        int maxBurst = number(answers, "MaxBurstLength", 262144, 512, OFFERED_MAX_BURST);
        int firstBurst = number(answers, "FirstBurstLength", 65536, 512, OFFERED_FIRST_BURST);
        if (firstBurst > maxBurst) {
            firstBurst = maxBurst; // RFC 7143: FirstBurstLength must not exceed MaxBurstLength
        }
        int xmit = number(answers, "MaxRecvDataSegmentLength", 8192, 512, 0xffffff);
        int r2t = number(answers, "MaxOutstandingR2T", 1, 1, OFFERED_MAX_OUTSTANDING_R2T);
        for (String digest : new String[] {"HeaderDigest", "DataDigest"}) {
            String v = answers.get(digest);
            if (v != null && !v.equals("None")) {
                throw new IllegalArgumentException(digest + "=" + v + " answered, but we offered only None");
            }
        }
        String erl = answers.get("ErrorRecoveryLevel");
        if (erl != null && !erl.equals("0")) {
            throw new IllegalArgumentException("ErrorRecoveryLevel=" + erl + " answered, but we offered 0");
        }
        return new SessionParams(initialR2T, immediate, firstBurst, maxBurst, xmit, OUR_MAX_RECV_DATA_SEGMENT_LENGTH, r2t);
    }

    private static boolean yesNo(Map<String, String> answers, String key, boolean rfcDefault) {
        String v = answers.get(key);
        if (v == null || v.equals("NotUnderstood") || v.equals("Irrelevant")) {
            return rfcDefault;
        }
        return switch (v) {
            case "Yes" -> true;
            case "No" -> false;
            default -> throw new IllegalArgumentException(key + "=" + v + " is not Yes or No");
        };
    }

    private static int number(Map<String, String> answers, String key, int rfcDefault, int min, int max) {
        String v = answers.get(key);
        if (v == null || v.equals("NotUnderstood") || v.equals("Irrelevant") || v.equals("Reject")) {
            return Math.min(rfcDefault, max);
        }
        int n;
        try {
            n = Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + "=" + v + " is not a number");
        }
        if (n < min || n > max) {
            throw new IllegalArgumentException(key + "=" + n + " outside " + min + ".." + max);
        }
        return n;
    }
}
