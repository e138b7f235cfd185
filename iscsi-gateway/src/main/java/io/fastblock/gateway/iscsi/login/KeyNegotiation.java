package io.fastblock.gateway.iscsi.login;

import java.util.AbstractMap.SimpleImmutableEntry;
import java.util.List;
import java.util.Map;

/**
 * Answers one offered text key with its result value (RFC 7143 sections 6.2 and 13) and records
 * the outcome in {@link SessionParams}. Pure logic, no state besides the params it writes.
 */
public final class KeyNegotiation {
    public static final String NOT_UNDERSTOOD = "NotUnderstood";
    public static final String REJECT = "Reject";
    public static final String IRRELEVANT = "Irrelevant";

    private KeyNegotiation() {
    }

    /** Keys the initiator declares that need no answer. */
    private static final List<String> SILENT = List.of("InitiatorName", "InitiatorAlias", "TargetName",
            "SessionType", "TargetAlias", "SendTargets");

    /**
     * Returns the answer pair for {@code key=value}, or null when the key needs no answer (it is a
     * declaration the caller handles, like InitiatorName).
     */
    public static Map.Entry<String, String> answer(String key, String value, SessionParams p) {
        if (SILENT.contains(key)) {
            return null;
        }
        String result;
        try {
            result = switch (key) {
                case "HeaderDigest" -> {
                    String r = digest(value, p.discovery);
                    p.headerDigest = r.equals("CRC32C");
                    yield r;
                }
                case "DataDigest" -> {
                    String r = digest(value, p.discovery);
                    p.dataDigest = r.equals("CRC32C");
                    yield r;
                }
                case "MaxConnections" -> {
                    number(value, 1, 65535);
                    p.maxConnections = 1;
                    yield "1";
                }
                case "InitialR2T" -> {
                    p.initialR2T = bool(value); // OR with our No
                    yield yesNo(p.initialR2T);
                }
                case "ImmediateData" -> {
                    p.immediateData = bool(value); // AND with our Yes
                    yield yesNo(p.immediateData);
                }
                case "MaxRecvDataSegmentLength" -> {
                    p.initiatorMaxRecvDataSegmentLength = number(value, 512, 16777215);
                    yield String.valueOf(SessionParams.OUR_MAX_RECV_DATA_SEGMENT_LENGTH);
                }
                case "MaxBurstLength" -> {
                    p.maxBurstLength = Math.min(number(value, 512, 16777215), SessionParams.OUR_MAX_BURST_LENGTH);
                    yield String.valueOf(p.maxBurstLength);
                }
                case "FirstBurstLength" -> {
                    p.firstBurstLength = Math.min(number(value, 512, 16777215),
                            SessionParams.OUR_FIRST_BURST_LENGTH);
                    yield String.valueOf(p.firstBurstLength);
                }
                case "DefaultTime2Wait" -> {
                    p.defaultTime2Wait = Math.max(number(value, 0, 3600), 2);
                    yield String.valueOf(p.defaultTime2Wait);
                }
                case "DefaultTime2Retain" -> {
                    p.defaultTime2Retain = Math.min(number(value, 0, 3600), 20);
                    yield String.valueOf(p.defaultTime2Retain);
                }
                case "MaxOutstandingR2T" -> {
                    p.maxOutstandingR2T = Math.min(number(value, 1, 65535), SessionParams.OUR_MAX_OUTSTANDING_R2T);
                    yield String.valueOf(p.maxOutstandingR2T);
                }
                case "DataPDUInOrder" -> {
                    bool(value);
                    p.dataPduInOrder = true; // OR with our Yes
                    yield "Yes";
                }
                case "DataSequenceInOrder" -> {
                    bool(value);
                    p.dataSequenceInOrder = true;
                    yield "Yes";
                }
                case "ErrorRecoveryLevel" -> {
                    number(value, 0, 2);
                    p.errorRecoveryLevel = 0;
                    yield "0";
                }
                case "IFMarker", "OFMarker" -> {
                    bool(value);
                    yield "No";
                }
                case "IFMarkInt", "OFMarkInt" -> REJECT;
                case "TaskReporting" -> "RFC3720";
                case "iSCSIProtocolLevel" -> {
                    number(value, 0, 31);
                    yield "0";
                }
                case "RDMAExtensions" -> "No";
                default -> NOT_UNDERSTOOD;
            };
        } catch (IllegalArgumentException bad) {
            result = REJECT;
        }
        return new SimpleImmutableEntry<>(key, result);
    }

    /**
     * The initiator's first choice we support. Discovery sessions never get CRC32C: some
     * initiators fail discovery with it (libiscsi issue 239) and it protects nothing of value there.
     */
    private static String digest(String offer, boolean discovery) {
        for (String v : offer.split(",")) {
            if (v.equals("None") || (v.equals("CRC32C") && !discovery)) {
                return v;
            }
        }
        return REJECT;
    }

    private static boolean bool(String v) {
        return switch (v) {
            case "Yes" -> true;
            case "No" -> false;
            default -> throw new IllegalArgumentException("not Yes/No: " + v);
        };
    }

    private static String yesNo(boolean b) {
        return b ? "Yes" : "No";
    }

    private static int number(String v, int min, int max) {
        int n;
        try {
            n = Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a number: " + v);
        }
        if (n < min || n > max) {
            throw new IllegalArgumentException(v + " outside " + min + ".." + max);
        }
        return n;
    }
}
