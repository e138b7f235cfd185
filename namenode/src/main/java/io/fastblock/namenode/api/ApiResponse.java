package io.fastblock.namenode.api;

/** A successful answer: status and a body to write as JSON, or null for no body (204). */
public record ApiResponse(int status, Object body) {
    public static ApiResponse ok(Object body) {
        return new ApiResponse(200, body);
    }

    public static ApiResponse created(Object body) {
        return new ApiResponse(201, body);
    }

    public static ApiResponse noContent() {
        return new ApiResponse(204, null);
    }
}
