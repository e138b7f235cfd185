package io.fastblock.namenode.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import io.fastblock.protocol.meta.QosSpec;
import java.util.regex.Pattern;

/**
 * The body of {@code POST /v1/volumes}, checked field by field so each problem gets its own error
 * code. Fields not in the contract are ignored, so newer clients keep working.
 */
public record CreateVolumeRequest(String name, long size, long chunkSize, String tenant, QosSpec qos, String clientId) {
    public static final Pattern NAME = Pattern.compile("^[a-z0-9][a-z0-9.-]{0,62}$");
    /** Client ids and tenant names: letters, digits and {@code ._:-}, as UUIDs and Keystone ids are. */
    public static final Pattern TOKEN = Pattern.compile("^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$");
    private static final String[] QOS_FIELDS = {"totalIopsSec", "readIopsSec", "writeIopsSec", "totalBytesSec",
        "readBytesSec", "writeBytesSec"};

    public CreateVolumeRequest(String name, long size, long chunkSize) {
        this(name, size, chunkSize, null, null, null);
    }

    public static boolean validName(String name) {
        return name != null && NAME.matcher(name).matches();
    }

    public static CreateVolumeRequest parse(byte[] body, long defaultChunkSize) {
        JsonNode root = parseJson(body);
        return new CreateVolumeRequest(name(root.get("name")), size(root.get("size")),
                chunkSize(root.get("chunkSize"), defaultChunkSize), token(root.get("tenant"), "tenant", "INVALID_TENANT"),
                qos(root.get("qos")), token(root.get("id"), "id", "INVALID_ID"));
    }

    /** An optional identifier field; null when absent. */
    static String token(JsonNode n, String field, String code) {
        if (n == null || n.isNull()) {
            return null;
        }
        if (!n.isTextual() || !TOKEN.matcher(n.textValue()).matches()) {
            throw new ApiException(400, code, field + " must be 1 to 128 characters of letters, digits, '.', '_', ':'"
                    + " and '-', starting with a letter or digit; got " + n);
        }
        return n.textValue();
    }

    static QosSpec qos(JsonNode n) {
        if (n == null || n.isNull()) {
            return QosSpec.UNLIMITED;
        }
        if (!n.isObject()) {
            throw new ApiException(400, "INVALID_QOS", "qos must be an object with per-second limits, got " + n);
        }
        long[] v = new long[QOS_FIELDS.length];
        java.util.Set<String> known = java.util.Set.of(QOS_FIELDS);
        n.fieldNames().forEachRemaining(f -> {
            if (!known.contains(f)) {
                throw new ApiException(400, "INVALID_QOS", "unknown qos field '" + f + "'; known: "
                        + String.join(", ", QOS_FIELDS));
            }
        });
        for (int i = 0; i < QOS_FIELDS.length; i++) {
            JsonNode f = n.get(QOS_FIELDS[i]);
            if (f == null || f.isNull()) {
                continue;
            }
            if (!f.isIntegralNumber() || !f.canConvertToLong() || f.longValue() < 0) {
                throw new ApiException(400, "INVALID_QOS", "qos." + QOS_FIELDS[i]
                        + " must be a whole number >= 0 (0 = no limit), got " + f);
            }
            v[i] = f.longValue();
        }
        return new QosSpec(v[0], v[1], v[2], v[3], v[4], v[5]);
    }

    static JsonNode parseJson(byte[] body) {
        if (body.length == 0) {
            throw new ApiException(400, "MALFORMED_JSON", "request body is empty; expected a JSON object");
        }
        JsonNode root;
        try {
            root = HttpApi.JSON.readTree(body);
        } catch (JsonProcessingException e) {
            throw new ApiException(400, "MALFORMED_JSON", "request body is not valid JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new ApiException(400, "MALFORMED_JSON", "request body could not be read: " + e.getMessage());
        }
        if (root == null || !root.isObject()) {
            throw new ApiException(400, "MALFORMED_JSON", "request body must be a JSON object");
        }
        return root;
    }

    private static String name(JsonNode n) {
        if (n == null || n.isNull()) {
            throw invalidName("name is required");
        }
        if (!n.isTextual()) {
            throw invalidName("name must be a string");
        }
        if (!validName(n.textValue())) {
            throw invalidName("name '" + n.textValue() + "' is invalid: 1 to 63 characters of a-z, 0-9, '.' and '-',"
                    + " starting with a letter or digit");
        }
        return n.textValue();
    }

    private static ApiException invalidName(String message) {
        return new ApiException(400, "INVALID_NAME", message);
    }

    /** A {@code size} field (bytes or "20G") checked like a create's; 400 INVALID_SIZE otherwise. */
    static long sizeField(JsonNode n) {
        return size(n);
    }

    private static long size(JsonNode n) {
        try {
            if (n == null || n.isNull()) {
                throw new SizeParser.InvalidSizeException("size is required");
            }
            if (n.isTextual()) {
                return SizeParser.parseVolumeSize(n.textValue());
            }
            return SizeParser.checkVolumeSize(wholeNumber(n, "size"));
        } catch (IllegalArgumentException e) {
            throw new ApiException(400, "INVALID_SIZE", e.getMessage());
        }
    }

    private static long chunkSize(JsonNode n, long defaultChunkSize) {
        if (n == null || n.isNull()) {
            return defaultChunkSize;
        }
        try {
            long bytes = n.isTextual() ? SizeParser.parseBytes(n.textValue()) : wholeNumber(n, "chunkSize");
            return ChunkSizes.check(bytes);
        } catch (IllegalArgumentException e) {
            throw new ApiException(400, "INVALID_CHUNK_SIZE", e.getMessage());
        }
    }

    private static long wholeNumber(JsonNode n, String field) {
        if (!n.isNumber()) {
            throw new IllegalArgumentException(field + " must be a number of bytes or a string like \"10G\", got " + n);
        }
        if (!n.isIntegralNumber()) {
            throw new IllegalArgumentException(field + " must be a whole number of bytes, got " + n);
        }
        if (!n.canConvertToLong()) {
            throw new IllegalArgumentException(field + " " + n + " is too large");
        }
        return n.longValue();
    }
}
