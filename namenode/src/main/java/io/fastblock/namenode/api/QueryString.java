package io.fastblock.namenode.api;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/** {@code a=1&b=x%20y} to a map; the first of repeated names wins, a name without '=' maps to "". */
final class QueryString {
    private QueryString() {
    }

    static Map<String, String> parse(String rawQuery) {
        Map<String, String> out = new HashMap<>();
        if (rawQuery == null || rawQuery.isEmpty()) {
            return out;
        }
        for (String pair : rawQuery.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            try {
                String name = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
                String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
                out.putIfAbsent(name, value);
            } catch (IllegalArgumentException e) {
                throw new ApiException(400, "BAD_REQUEST", "malformed query string: " + e.getMessage());
            }
        }
        return out;
    }
}
