package io.fastblock.gateway.iscsi.login;

import io.fastblock.gateway.iscsi.TargetAccess;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.AbstractMap.SimpleImmutableEntry;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * The target side of CHAP (RFC 7143 section 12.1.3, RFC 1994) for one login: picks the
 * algorithm, issues a fresh random challenge, checks the initiator's response and, for mutual
 * CHAP, answers the initiator's challenge. Algorithm numbers as libiscsi and open-iscsi use them
 * (RFC 7143 / IANA PPP numbers): 5 MD5, 6 SHA-1, 7 SHA-256, 8 SHA3-256. Pure logic: no I/O.
 */
public final class ChapAuthenticator {
    /** Random challenge length; RFC 7143 asks for unpredictable challenges, 16 bytes at least. */
    static final int CHALLENGE_LENGTH = 32;
    /** Longest binary value we decode (CHAP_C from the initiator, CHAP_R). */
    static final int MAX_BINARY = 1024;

    /** Why an exchange failed; every failure is login status 0x0201. */
    public static final class ChapFailure extends Exception {
        private static final long serialVersionUID = 1L;

        ChapFailure(String message) {
            super(message);
        }
    }

    private enum State { AWAIT_ALGORITHM, AWAIT_RESPONSE, DONE }

    private final TargetAccess.Chap credentials;
    private final SecureRandom random;
    private State state = State.AWAIT_ALGORITHM;
    private String algorithm;
    private int identifier;
    private byte[] challenge;

    public ChapAuthenticator(TargetAccess.Chap credentials, SecureRandom random) {
        this.credentials = credentials;
        this.random = random;
    }

    public boolean done() {
        return state == State.DONE;
    }

    /** The digest algorithm name for a CHAP_A number, or null when we do not support it. */
    static String algorithmName(String number) {
        return switch (number.trim()) {
            case "5" -> "MD5";
            case "6" -> "SHA-1";
            case "7" -> "SHA-256";
            case "8" -> "SHA3-256";
            default -> null;
        };
    }

    /**
     * Answers {@code CHAP_A=<list>}: the first algorithm of the initiator's list we support, an
     * identifier and a fresh challenge.
     */
    public List<Map.Entry<String, String>> offerChallenge(String offered) throws ChapFailure {
        if (state != State.AWAIT_ALGORITHM) {
            throw new ChapFailure("CHAP_A out of sequence");
        }
        String chosen = null;
        for (String a : offered.split(",")) {
            if (algorithmName(a) != null) {
                chosen = a.trim();
                break;
            }
        }
        if (chosen == null) {
            throw new ChapFailure("no supported CHAP algorithm in " + offered);
        }
        algorithm = algorithmName(chosen);
        identifier = random.nextInt(256);
        challenge = new byte[CHALLENGE_LENGTH];
        random.nextBytes(challenge);
        state = State.AWAIT_RESPONSE;
        List<Map.Entry<String, String>> out = new ArrayList<>();
        out.add(new SimpleImmutableEntry<>("CHAP_A", chosen));
        out.add(new SimpleImmutableEntry<>("CHAP_I", String.valueOf(identifier)));
        out.add(new SimpleImmutableEntry<>("CHAP_C", "0x" + HexFormat.of().formatHex(challenge)));
        return out;
    }

    /**
     * Checks {@code CHAP_N}/{@code CHAP_R}; with {@code CHAP_I}/{@code CHAP_C} (mutual CHAP) also
     * returns the target's own {@code CHAP_N}/{@code CHAP_R}.
     */
    public List<Map.Entry<String, String>> verify(String name, String response, String mutualId,
                                                  String mutualChallenge) throws ChapFailure {
        if (state != State.AWAIT_RESPONSE) {
            throw new ChapFailure("CHAP response out of sequence");
        }
        if (name == null || response == null) {
            throw new ChapFailure("CHAP_N and CHAP_R are both required");
        }
        if (!name.equals(credentials.user())) {
            throw new ChapFailure("unknown CHAP user " + name);
        }
        byte[] expected = digest(algorithm, identifier, credentials.secret(), challenge);
        if (!MessageDigest.isEqual(expected, decode(response))) {
            throw new ChapFailure("wrong CHAP response for user " + name);
        }
        if ((mutualId == null) != (mutualChallenge == null)) {
            throw new ChapFailure("mutual CHAP needs both CHAP_I and CHAP_C");
        }
        List<Map.Entry<String, String>> out = new ArrayList<>();
        if (mutualId != null) {
            if (!credentials.mutual()) {
                throw new ChapFailure("initiator asked for mutual CHAP, none configured");
            }
            if (credentials.targetSecret().equals(credentials.secret())) {
                throw new ChapFailure("mutual CHAP refused: same secret configured in both directions");
            }
            int id = number(mutualId);
            byte[] theirs = decode(mutualChallenge);
            if (theirs.length == 0) {
                throw new ChapFailure("empty mutual CHAP challenge");
            }
            if (Arrays.equals(theirs, challenge)) {
                throw new ChapFailure("reflected CHAP challenge");
            }
            byte[] ours = digest(algorithm, id, credentials.targetSecret(), theirs);
            out.add(new SimpleImmutableEntry<>("CHAP_N", credentials.targetUser()));
            out.add(new SimpleImmutableEntry<>("CHAP_R", "0x" + HexFormat.of().formatHex(ours)));
        }
        state = State.DONE;
        return out;
    }

    /** H(identifier || secret || challenge) (RFC 1994 section 4.1). */
    static byte[] digest(String algorithm, int identifier, String secret, byte[] challenge) {
        try {
            MessageDigest md = MessageDigest.getInstance(algorithm);
            md.update((byte) identifier);
            md.update(secret.getBytes(StandardCharsets.UTF_8));
            md.update(challenge);
            return md.digest();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(algorithm + " missing from the JDK", e);
        }
    }

    private static int number(String v) throws ChapFailure {
        try {
            int n = Integer.parseInt(v.trim());
            if (n < 0 || n > 255) {
                throw new ChapFailure("CHAP_I outside 0..255: " + v);
            }
            return n;
        } catch (NumberFormatException e) {
            throw new ChapFailure("CHAP_I not a number: " + v);
        }
    }

    /** A binary value: {@code 0x} hex or {@code 0b} base64 (RFC 7143 section 6.1). */
    static byte[] decode(String v) throws ChapFailure {
        if (v.length() < 3 || v.length() > 2 * MAX_BINARY + 2 || v.charAt(0) != '0') {
            throw new ChapFailure("not a binary value: " + abbreviate(v));
        }
        String body = v.substring(2);
        try {
            switch (v.charAt(1)) {
                case 'x', 'X' -> {
                    if ((body.length() & 1) == 1) {
                        body = "0" + body; // an odd number of digits has an implied leading zero
                    }
                    return HexFormat.of().parseHex(body);
                }
                case 'b', 'B' -> {
                    return Base64.getDecoder().decode(body);
                }
                default -> throw new ChapFailure("not a binary value: " + abbreviate(v));
            }
        } catch (IllegalArgumentException e) {
            throw new ChapFailure("malformed binary value: " + abbreviate(v));
        }
    }

    private static String abbreviate(String v) {
        return v.length() > 20 ? v.substring(0, 20) + "..." : v;
    }
}
