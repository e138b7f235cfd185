package io.fastblock.namenode.api;

import com.fasterxml.jackson.databind.JsonNode;
import io.fastblock.protocol.meta.ExportRecord;
import java.security.SecureRandom;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.regex.Pattern;

/**
 * The body of {@code POST /v1/volumes/{name}/exports}: {@code initiator} (an IQN, EUI or NAA name,
 * or "*"), {@code host} (optional), {@code chap}: "generate" (the default), "none", or explicit
 * credentials {@code {user, secret, targetUser?, targetSecret?}}.
 */
public final class ExportRequest {
    /** RFC 7143 names: iqn., eui. or naa. forms, at most 223 bytes; lower case as initiators send them. */
    static final Pattern INITIATOR = Pattern.compile("^(iqn\\.[0-9]{4}-[0-9]{2}\\.[^\\s]+|eui\\.[0-9A-Fa-f]{16}"
            + "|naa\\.[0-9A-Fa-f]{16,32})$");
    private static final Pattern CHAP_USER = Pattern.compile("^[\\x21-\\x7e]{1,255}$");
    /** Secrets: 12 to 255 printable characters (RFC 7143 wants at least 96 bits; Windows initiators at most 16). */
    private static final Pattern CHAP_SECRET = Pattern.compile("^[\\x21-\\x7e]{12,255}$");
    private static final String ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
    private static final int GENERATED_SECRET_LENGTH = 16;
    private static final SecureRandom RANDOM = new SecureRandom();

    private ExportRequest() {
    }

    public static boolean validInitiator(String initiator) {
        return ExportRecord.ANY_INITIATOR.equals(initiator)
                || (initiator != null && initiator.length() <= 223 && INITIATOR.matcher(initiator).matches());
    }

    /** The export this body asks for, with generated credentials filled in. */
    public static ExportRecord parse(String volume, byte[] body) {
        JsonNode root = CreateVolumeRequest.parseJson(body);
        JsonNode i = root.get("initiator");
        if (i == null || !i.isTextual() || !validInitiator(i.textValue())) {
            throw new ApiException(400, "INVALID_INITIATOR", "initiator must be an iSCSI name (iqn.YYYY-MM.…,"
                    + " eui.<16 hex>, naa.<16 or 32 hex>) or \"*\" for any initiator; got " + i);
        }
        String initiator = i.textValue();
        JsonNode h = root.get("host");
        String host = null;
        if (h != null && !h.isNull()) {
            if (!h.isTextual() || h.textValue().isEmpty() || h.textValue().length() > 255) {
                throw new ApiException(400, "INVALID_HOST", "host must be a non-empty string of at most 255 characters");
            }
            host = h.textValue();
        }
        String createdAt = Instant.now().truncatedTo(ChronoUnit.MILLIS).toString();
        JsonNode chap = root.get("chap");
        if (chap == null || chap.isNull() || (chap.isTextual() && chap.textValue().equals("generate"))) {
            return new ExportRecord(volume, initiator, host, generatedUser(volume), generatedSecret(), null, null,
                    createdAt);
        }
        if (chap.isTextual() && chap.textValue().equals("none")) {
            return new ExportRecord(volume, initiator, host, null, null, null, null, createdAt);
        }
        if (!chap.isObject()) {
            throw invalidChap("chap must be \"generate\", \"none\" or {user, secret, targetUser?, targetSecret?}; got "
                    + chap);
        }
        String user = field(chap, "user", CHAP_USER, true);
        String secret = field(chap, "secret", CHAP_SECRET, true);
        String targetUser = field(chap, "targetUser", CHAP_USER, false);
        String targetSecret = field(chap, "targetSecret", CHAP_SECRET, false);
        if ((targetUser == null) != (targetSecret == null)) {
            throw invalidChap("mutual CHAP needs both targetUser and targetSecret");
        }
        if (targetSecret != null && targetSecret.equals(secret)) {
            throw invalidChap("targetSecret must differ from secret (RFC 7143 forbids one secret for both directions)");
        }
        return new ExportRecord(volume, initiator, host, user, secret, targetUser, targetSecret, createdAt);
    }

    private static String field(JsonNode chap, String name, Pattern pattern, boolean required) {
        JsonNode n = chap.get(name);
        if (n == null || n.isNull()) {
            if (required) {
                throw invalidChap("chap." + name + " is required");
            }
            return null;
        }
        if (!n.isTextual() || !pattern.matcher(n.textValue()).matches()) {
            throw invalidChap("chap." + name + (name.toLowerCase().contains("secret")
                    ? " must be 12 to 255 printable ASCII characters without spaces"
                    : " must be 1 to 255 printable ASCII characters without spaces"));
        }
        return n.textValue();
    }

    private static ApiException invalidChap(String message) {
        return new ApiException(400, "INVALID_CHAP", message);
    }

    private static String generatedUser(String volume) {
        return "fb-" + volume;
    }

    static String generatedSecret() {
        StringBuilder b = new StringBuilder(GENERATED_SECRET_LENGTH);
        for (int k = 0; k < GENERATED_SECRET_LENGTH; k++) {
            b.append(ALPHABET.charAt(RANDOM.nextInt(ALPHABET.length())));
        }
        return b.toString();
    }
}
