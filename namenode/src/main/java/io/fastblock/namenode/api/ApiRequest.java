package io.fastblock.namenode.api;

import java.util.Map;

/** What a route handler sees of a request: the matched path parameters, the query and the (bounded) body. */
public record ApiRequest(String method, String path, Map<String, String> params, byte[] body,
                         Map<String, String> query) {
    public ApiRequest {
        query = query == null ? Map.of() : Map.copyOf(query);
    }

    public ApiRequest(String method, String path, Map<String, String> params, byte[] body) {
        this(method, path, params, body, Map.of());
    }

    public String param(String name) {
        return params.get(name);
    }

    /** A query parameter, or null when absent. */
    public String query(String name) {
        return query.get(name);
    }
}
