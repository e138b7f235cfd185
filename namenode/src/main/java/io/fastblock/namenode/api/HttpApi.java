package io.fastblock.namenode.api;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.fastblock.namenode.meta.MetadataUnavailableException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import javax.net.ssl.SSLContext;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.net.InetSocketAddress;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The REST server: JDK {@link HttpServer} (or {@link HttpsServer} when given a TLS context), one context that hands every request to the {@link Router},
 * handlers on a bounded pool (when it is full the accepting thread runs the request itself, which
 * pushes back on clients instead of queueing without limit). Every error leaves as
 * {@code {"code","message"}} JSON.
 *
 * <p>Before a handler runs, two gates: with an API token configured, every route but
 * {@code /v1/health} needs {@code Authorization: Bearer <token>} (else 401 {@code UNAUTHORIZED});
 * and a namenode that does not lead sends every request that changes metadata (anything but GET)
 * to the leader with a 307, or answers 503 {@code NOT_LEADER} when no leader is known. Reads are
 * served by any namenode: they all read the same ZooKeeper.
 */
public final class HttpApi implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(HttpApi.class);
    public static final int MAX_BODY_BYTES = 1 << 20;
    private static final int THREADS = 8;
    private static final int QUEUE = 256;
    private static final long DISCARD_LIMIT = 8L << 20;

    /** The one JSON mapper of the API: strict on input (duplicate keys, trailing data) so bad bodies are caught. */
    public static final ObjectMapper JSON = new ObjectMapper()
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(DeserializationFeature.USE_BIG_INTEGER_FOR_INTS)
            .disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);

    private record ErrorBody(String code, String message) {
    }

    private final HttpServer server;
    private final ThreadPoolExecutor pool;
    private final Router router;
    private final byte[] expectedAuthorization;
    private final LeaderView leadership;

    private HttpApi(HttpServer server, ThreadPoolExecutor pool, Router router, String apiToken, LeaderView leadership) {
        this.server = server;
        this.pool = pool;
        this.router = router;
        this.expectedAuthorization = apiToken == null || apiToken.isEmpty() ? null
                : ("Bearer " + apiToken).getBytes(StandardCharsets.UTF_8);
        this.leadership = leadership;
    }

    /** The JDK server's switch for TCP_NODELAY on accepted connections (read once, when its classes load). */
    static final String NODELAY_PROPERTY = "sun.net.httpserver.nodelay";

    static {
        // The JDK server leaves Nagle's algorithm on and writes a response as two segments, headers
        // then body: on a keep-alive connection the body waited for the client's delayed ACK of the
        // headers, 40 ms on Linux. Every gateway lookup, chunk allocation and lease call on its kept
        // connections paid it (44 ms per call measured; a GET LBA STATUS over unknown chunks ~47 ms).
        // A client opening a connection per request (the Cinder driver's urllib) did not: a new
        // connection acknowledges at once. An operator's own setting wins.
        if (System.getProperty(NODELAY_PROPERTY) == null) {
            System.setProperty(NODELAY_PROPERTY, "true");
        }
    }

    public static HttpApi start(String host, int port, Router router) throws IOException {
        return start(host, port, router, "", null, LeaderView.ALONE);
    }

    /**
     * @param apiToken   bearer token required on every route but /v1/health; empty or null: none
     * @param tls        TLS context (HTTPS) or null for plain HTTP
     * @param leadership who leads; writes on a namenode that does not are redirected
     */
    public static HttpApi start(String host, int port, Router router, String apiToken, SSLContext tls,
                                LeaderView leadership) throws IOException {
        AtomicInteger n = new AtomicInteger();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(THREADS, THREADS, 60, TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(QUEUE), r -> {
                    Thread t = new Thread(r, "http-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                }, new ThreadPoolExecutor.CallerRunsPolicy());
        HttpServer server;
        if (tls == null) {
            server = HttpServer.create(new InetSocketAddress(host, port), 128);
        } else {
            HttpsServer https = HttpsServer.create(new InetSocketAddress(host, port), 128);
            https.setHttpsConfigurator(new HttpsConfigurator(tls));
            server = https;
        }
        HttpApi api = new HttpApi(server, pool, router, apiToken, leadership);
        server.createContext("/", api::serve);
        server.setExecutor(pool);
        server.start();
        return api;
    }

    public int port() {
        return server.getAddress().getPort();
    }

    public Router router() {
        return router;
    }

    private void serve(HttpExchange exchange) {
        try (exchange) {
            String method = exchange.getRequestMethod();
            String path = exchange.getRequestURI().getRawPath();
            try {
                authenticate(exchange, path);
                Router.Match match = router.match(method, path);
                if (!match.found()) {
                    if (match.pathKnown()) {
                        exchange.getResponseHeaders().set("Allow", String.join(", ", match.allowedMethods()));
                        throw new ApiException(405, "METHOD_NOT_ALLOWED",
                                method + " is not allowed on " + path + "; allowed: "
                                        + String.join(", ", match.allowedMethods()));
                    }
                    throw new ApiException(404, "NOT_FOUND", "no route for " + method + " " + path);
                }
                if (!"GET".equals(method) && !leadership.isLeader()) {
                    redirectToLeader(exchange, method, path);
                    return;
                }
                byte[] body = readBody(exchange);
                ApiResponse response = match.handler().handle(new ApiRequest(method, path, match.params(), body,
                        QueryString.parse(exchange.getRequestURI().getRawQuery())));
                send(exchange, response.status(), response.body());
            } catch (ApiException e) {
                send(exchange, e.status(), new ErrorBody(e.code(), e.getMessage()));
            } catch (MetadataUnavailableException e) {
                LOG.warn("{} {}: {}", method, path, e.getMessage());
                send(exchange, 503, new ErrorBody("METADATA_UNAVAILABLE", e.getMessage()));
            } catch (Exception e) {
                LOG.error("{} {} failed", method, path, e);
                send(exchange, 500, new ErrorBody("INTERNAL_ERROR", "internal error: " + e));
            }
        } catch (IOException e) {
            // The client went away mid-answer; nothing left to tell it.
            LOG.debug("writing response: {}", e.toString());
        }
    }

    private void authenticate(HttpExchange exchange, String path) {
        if (expectedAuthorization == null || "/v1/health".equals(path)) {
            return;
        }
        String given = exchange.getRequestHeaders().getFirst("Authorization");
        // Constant-time comparison: the token must not leak through response timing.
        if (given == null || !MessageDigest.isEqual(expectedAuthorization, given.trim().getBytes(StandardCharsets.UTF_8))) {
            exchange.getResponseHeaders().set("WWW-Authenticate", "Bearer realm=\"fastblock\"");
            throw new ApiException(401, "UNAUTHORIZED", given == null
                    ? "this route needs an 'Authorization: Bearer <token>' header"
                    : "the bearer token is not valid");
        }
    }

    /** 307 keeps the method and body, so a client that follows it repeats the same write at the leader. */
    private void redirectToLeader(HttpExchange exchange, String method, String path) throws IOException {
        discard(exchange.getRequestBody());
        String leader = leadership.leaderUrl().orElse(null);
        if (leader == null) {
            throw new ApiException(503, "NOT_LEADER", "this namenode is a standby and no leader is elected yet; "
                    + method + " " + path + " must go to the leader");
        }
        String query = exchange.getRequestURI().getRawQuery();
        String location = leader + path + (query == null ? "" : "?" + query);
        exchange.getResponseHeaders().set("Location", location);
        send(exchange, 307, new ErrorBody("NOT_LEADER", "this namenode is a standby; the leader is " + leader));
    }

    private static byte[] readBody(HttpExchange exchange) throws IOException {
        String declared = exchange.getRequestHeaders().getFirst("Content-Length");
        if (declared != null) {
            long length;
            try {
                length = Long.parseLong(declared.trim());
            } catch (NumberFormatException e) {
                throw new ApiException(400, "BAD_REQUEST", "Content-Length is not a number: " + declared);
            }
            if (length > MAX_BODY_BYTES) {
                discard(exchange.getRequestBody());
                throw tooLarge();
            }
        }
        InputStream in = exchange.getRequestBody();
        byte[] body = in.readNBytes(MAX_BODY_BYTES + 1);
        if (body.length > MAX_BODY_BYTES) {
            discard(in); // chunked upload without a declared length
            throw tooLarge();
        }
        return body;
    }

    /**
     * Reads away a moderately oversized body so the client, still sending, gets to read the 413
     * instead of a reset connection. Bigger bodies are cut off when the exchange closes.
     */
    private static void discard(InputStream in) throws IOException {
        long skipped = 0;
        byte[] sink = new byte[64 * 1024];
        int n;
        while (skipped < DISCARD_LIMIT && (n = in.read(sink, 0, (int) Math.min(sink.length, DISCARD_LIMIT - skipped))) > 0) {
            skipped += n;
        }
    }

    private static ApiException tooLarge() {
        return new ApiException(413, "PAYLOAD_TOO_LARGE", "request body larger than " + MAX_BODY_BYTES + " bytes");
    }

    private static void send(HttpExchange exchange, int status, Object body) throws IOException {
        if (body == null) {
            exchange.sendResponseHeaders(status, -1);
            return;
        }
        byte[] bytes = JSON.writeValueAsBytes(body);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    /** Stops accepting, then lets running handlers finish (a few seconds at most). */
    @Override
    public void close() {
        server.stop(0);
        pool.shutdown();
        try {
            if (!pool.awaitTermination(5, TimeUnit.SECONDS)) {
                pool.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
