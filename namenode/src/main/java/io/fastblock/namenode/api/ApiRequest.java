package io.fastblock.namenode.api;

import java.util.Map;

/** What a route handler sees of a request: the matched path parameters and the (bounded) body. */
public record ApiRequest(String method, String path, Map<String, String> params, byte[] body) {
    public String param(String name) {
        return params.get(name);
    }
}
