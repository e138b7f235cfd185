package io.fastblock.namenode.api;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;

/**
 * Method + path pattern to handler. Patterns are literal segments and {@code {name}} parameters,
 * written exactly as in the OpenAPI file, which lets a test compare the two sets.
 */
public final class Router {
    @FunctionalInterface
    public interface Handler {
        ApiResponse handle(ApiRequest request) throws Exception;
    }

    /** A registered route, as (method, pattern). */
    public record Route(String method, String pattern) {
    }

    /** The outcome of matching a request: a handler with its parameters, or the methods the path does allow. */
    public record Match(Handler handler, Map<String, String> params, List<String> allowedMethods) {
        public boolean found() {
            return handler != null;
        }

        public boolean pathKnown() {
            return !allowedMethods.isEmpty();
        }
    }

    private record Entry(Route route, String[] segments, Handler handler) {
    }

    private final List<Entry> entries = new ArrayList<>();

    public Router add(String method, String pattern, Handler handler) {
        if (!pattern.startsWith("/")) {
            throw new IllegalArgumentException("pattern must start with /: " + pattern);
        }
        Route route = new Route(method, pattern);
        for (Entry e : entries) {
            if (e.route.equals(route)) {
                throw new IllegalArgumentException("route registered twice: " + method + " " + pattern);
            }
        }
        entries.add(new Entry(route, split(pattern), handler));
        return this;
    }

    public List<Route> routes() {
        List<Route> out = new ArrayList<>();
        for (Entry e : entries) {
            out.add(e.route);
        }
        return Collections.unmodifiableList(out);
    }

    public Match match(String method, String path) {
        String[] segments = split(path);
        TreeSet<String> allowed = new TreeSet<>();
        for (Entry e : entries) {
            Optional<Map<String, String>> params = bind(e.segments, segments);
            if (params.isEmpty()) {
                continue;
            }
            if (e.route.method().equals(method)) {
                return new Match(e.handler, params.get(), List.of(e.route.method()));
            }
            allowed.add(e.route.method());
        }
        return new Match(null, Map.of(), List.copyOf(allowed));
    }

    private static Optional<Map<String, String>> bind(String[] pattern, String[] path) {
        if (pattern.length != path.length) {
            return Optional.empty();
        }
        Map<String, String> params = new HashMap<>();
        for (int i = 0; i < pattern.length; i++) {
            String p = pattern[i];
            if (p.startsWith("{") && p.endsWith("}")) {
                if (path[i].isEmpty()) {
                    return Optional.empty();
                }
                Optional<String> value = percentDecoded(path[i]);
                if (value.isEmpty()) {
                    return Optional.empty();
                }
                params.put(p.substring(1, p.length() - 1), value.get());
            } else if (!p.equals(path[i])) {
                return Optional.empty();
            }
        }
        return Optional.of(params);
    }

    /**
     * A parameter as the client meant it: clients percent-encode what is not a plain path character
     * (an IQN's ':' arrives as %3A). Decoded after splitting, so an encoded '/' stays inside its
     * segment; '+' is a literal plus in a path, not a space. Malformed escapes match nothing.
     */
    private static Optional<String> percentDecoded(String segment) {
        if (segment.indexOf('%') < 0) {
            return Optional.of(segment);
        }
        try {
            return Optional.of(java.net.URLDecoder.decode(segment.replace("+", "%2B"),
                    java.nio.charset.StandardCharsets.UTF_8));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    /** "/a/b" -> [a, b]; a trailing slash makes an empty last segment, so "/a/" does not match "/a". */
    private static String[] split(String path) {
        return path.substring(1).split("/", -1);
    }
}
