package io.fastblock.namenode;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** A real HTTP client for the namenode's REST API, answering status + parsed JSON. */
public final class TestHttp {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final HttpClient client;
    private final String base;
    private final String token;

    /** One answer: status, raw body and the body as JSON (null when empty). */
    public record Reply(int status, String body, JsonNode json, HttpResponse<String> raw) {
        public String code() {
            return json == null || json.get("code") == null ? null : json.get("code").asText();
        }

        @Override
        public String toString() {
            return status + " " + body;
        }
    }

    public TestHttp(String base) {
        this(base, null, HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build());
    }

    /** A client sending {@code token} as bearer token (null: none) through {@code client} (e.g. one trusting a test CA). */
    public TestHttp(String base, String token, HttpClient client) {
        this.base = base;
        this.token = token;
        this.client = client;
    }

    public Reply put(String path, String body) throws IOException, InterruptedException {
        return send("PUT", path, body);
    }

    public Reply get(String path) throws IOException, InterruptedException {
        return send("GET", path, null);
    }

    public Reply post(String path, String body) throws IOException, InterruptedException {
        return send("POST", path, body);
    }

    public Reply delete(String path) throws IOException, InterruptedException {
        return send("DELETE", path, null);
    }

    public Reply send(String method, String path, String body) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body));
        if (body != null) {
            b.header("Content-Type", "application/json");
        }
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        HttpResponse<String> r = client.send(b.build(), HttpResponse.BodyHandlers.ofString());
        JsonNode json = r.body().isEmpty() ? null : JSON.readTree(r.body());
        return new Reply(r.statusCode(), r.body(), json, r);
    }
}
