package io.fastblock.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The few namenode calls the launcher and the end-to-end tests make. Given several namenode URLs
 * (comma-separated) it sends to the one that last answered, moves on to the next when one cannot be
 * reached, and follows a standby's 307 to the leader.
 */
public final class NamenodeAdmin {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int MAX_REDIRECTS = 3;

    private final List<String> baseUrls;
    private volatile int current;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    public NamenodeAdmin(String baseUrls) {
        List<String> urls = new java.util.ArrayList<>();
        for (String u : baseUrls.split(",")) {
            if (!u.isBlank()) {
                urls.add(u.trim().replaceAll("/+$", ""));
            }
        }
        if (urls.isEmpty()) {
            throw new IllegalArgumentException("no namenode URL");
        }
        this.baseUrls = List.copyOf(urls);
    }

    /** An HTTP answer: status and parsed JSON body (null when empty). */
    public record Reply(int status, JsonNode body) {
        public String errorCode() {
            return body == null || body.get("code") == null ? "" : body.get("code").asText();
        }
    }

    public Reply get(String path) throws IOException, InterruptedException {
        return send(path, "GET", null);
    }

    public Reply delete(String path) throws IOException, InterruptedException {
        return send(path, "DELETE", null);
    }

    public Reply post(String path, Object body) throws IOException, InterruptedException {
        byte[] bytes = body instanceof String s ? s.getBytes(java.nio.charset.StandardCharsets.UTF_8)
                : JSON.writeValueAsBytes(body);
        return send(path, "POST", bytes);
    }

    public Reply patch(String path, Object body) throws IOException, InterruptedException {
        byte[] bytes = body instanceof String s ? s.getBytes(java.nio.charset.StandardCharsets.UTF_8)
                : JSON.writeValueAsBytes(body);
        return send(path, "PATCH", bytes);
    }

    public Reply createVolume(String name, String size, String chunkSize) throws IOException, InterruptedException {
        return chunkSize == null ? post("/v1/volumes", Map.of("name", name, "size", size))
                : post("/v1/volumes", Map.of("name", name, "size", size, "chunkSize", parseSize(chunkSize)));
    }

    /**
     * Exports the volume to any initiator without CHAP (what a one-machine demo cluster wants);
     * 201 when created, 200 when it existed.
     */
    public Reply createOpenExport(String volume) throws IOException, InterruptedException {
        return post("/v1/volumes/" + volume + "/exports", Map.of("initiator", "*", "chap", "none"));
    }

    private Reply send(String path, String method, byte[] body) throws IOException, InterruptedException {
        IOException last = null;
        for (int attempt = 0; attempt < baseUrls.size(); attempt++) {
            int index = (current + attempt) % baseUrls.size();
            try {
                Reply r = sendTo(baseUrls.get(index) + path, method, body);
                current = index;
                return r;
            } catch (java.net.ConnectException | java.net.http.HttpConnectTimeoutException e) {
                last = e; // that namenode is down: the next one
            }
        }
        throw last;
    }

    private Reply sendTo(String url, String method, byte[] body) throws IOException, InterruptedException {
        for (int redirects = 0; ; redirects++) {
            HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10))
                    .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                            : HttpRequest.BodyPublishers.ofByteArray(body));
            if (body != null) {
                b.header("Content-Type", "application/json");
            }
            HttpResponse<byte[]> r = http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
            var location = r.headers().firstValue("Location");
            if (r.statusCode() == 307 && location.isPresent() && redirects < MAX_REDIRECTS) {
                url = URI.create(url).resolve(location.get()).toString();
                continue;
            }
            JsonNode json = r.body().length == 0 ? null : JSON.readTree(r.body());
            return new Reply(r.statusCode(), json);
        }
    }

    /** True when the namenode answers and sees {@code storageCount} live nodes formed into groups. */
    public boolean clusterFormed(int storageCount) {
        try {
            Reply nodes = get("/v1/nodes");
            Reply groups = get("/v1/groups");
            if (nodes.status() != 200 || groups.status() != 200) {
                return false;
            }
            int live = 0;
            for (JsonNode n : nodes.body().get("nodes")) {
                if (n.path("live").asBoolean()) {
                    live++;
                }
            }
            return live >= storageCount && groups.body().get("groups").size() > 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    static long parseSize(String s) {
        String t = s.trim().toUpperCase(java.util.Locale.ROOT).replace("IB", "").replace("B", "");
        long mult = 1;
        char last = t.charAt(t.length() - 1);
        int idx = "KMGTP".indexOf(last);
        if (idx >= 0) {
            mult = 1L << (10 * (idx + 1));
            t = t.substring(0, t.length() - 1);
        }
        return Long.parseLong(t) * mult;
    }
}
