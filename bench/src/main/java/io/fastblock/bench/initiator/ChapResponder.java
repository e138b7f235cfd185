package io.fastblock.bench.initiator;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.HexFormat;

/**
 * The initiator's side of one-way CHAP (RFC 7143 section 12.1.3, RFC 1994): the response to the
 * target's challenge is H(identifier || secret || challenge). Algorithm numbers as libiscsi and
 * open-iscsi use them: 5 MD5, 6 SHA-1, 7 SHA-256.
 */
public final class ChapResponder {
    /** What we offer in CHAP_A, strongest first. */
    public static final String OFFERED_ALGORITHMS = "7,6,5";

    private ChapResponder() {
    }

    static String digestName(String number) {
        return switch (number.trim()) {
            case "5" -> "MD5";
            case "6" -> "SHA-1";
            case "7" -> "SHA-256";
            default -> null;
        };
    }

    /** Decodes a CHAP binary value: {@code 0x} hex or {@code 0b} base64. */
    static byte[] decodeBinary(String v) {
        if (v.length() > 2 && (v.startsWith("0x") || v.startsWith("0X"))) {
            String hex = v.substring(2);
            if ((hex.length() & 1) == 1) {
                hex = "0" + hex;
            }
            return HexFormat.of().parseHex(hex);
        }
        if (v.length() > 2 && (v.startsWith("0b") || v.startsWith("0B"))) {
            return Base64.getDecoder().decode(v.substring(2));
        }
        throw new IllegalArgumentException("CHAP value is neither 0x hex nor 0b base64: " + v);
    }

    /** CHAP_R for the target's CHAP_A, CHAP_I and CHAP_C, as {@code 0x} hex. */
    public static String response(String algorithm, String identifier, String challenge, String secret) {
        String name = digestName(algorithm);
        if (name == null) {
            throw new IllegalArgumentException("target chose CHAP_A=" + algorithm + ", we offered " + OFFERED_ALGORITHMS);
        }
        int id;
        try {
            id = Integer.parseInt(identifier.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("CHAP_I is not a number: " + identifier);
        }
        if (id < 0 || id > 255) {
            throw new IllegalArgumentException("CHAP_I outside 0..255: " + id);
        }
        try {
            MessageDigest md = MessageDigest.getInstance(name);
            md.update((byte) id);
            md.update(secret.getBytes(StandardCharsets.UTF_8));
            md.update(decodeBinary(challenge));
            return "0x" + HexFormat.of().formatHex(md.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(name + " missing from the JDK", e);
        }
    }
}
