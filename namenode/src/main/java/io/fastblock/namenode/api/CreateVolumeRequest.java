package io.fastblock.namenode.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.util.regex.Pattern;

/**
 * The body of {@code POST /v1/volumes}, checked field by field so each problem gets its own error
 * code. Fields not in the contract are ignored, so newer clients keep working.
 */
public record CreateVolumeRequest(String name, long size, long chunkSize) {
    public static final Pattern NAME = Pattern.compile("^[a-z0-9][a-z0-9.-]{0,62}$");

    public static boolean validName(String name) {
        return name != null && NAME.matcher(name).matches();
    }

    public static CreateVolumeRequest parse(byte[] body, long defaultChunkSize) {
        JsonNode root = parseJson(body);
        return new CreateVolumeRequest(name(root.get("name")), size(root.get("size")),
                chunkSize(root.get("chunkSize"), defaultChunkSize));
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
