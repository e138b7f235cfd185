package io.fastblock.gateway.client;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asynchronous client of the namenode's v1 REST API. Requests run on this client's own threads
 * (never a Netty event loop); futures complete on them. When a namenode cannot be reached (or
 * answers 503, as a standby may), the next configured URL is tried; the last one that answered is
 * tried first next time. A standby answers writes with a 307 to the leader, which is followed
 * (method and body kept); a standby that knows no leader answers 503 {@code NOT_LEADER}, and the
 * next URL is tried. Error answers become {@link NamenodeException}s with the contract's code and
 * message; no namenode reachable becomes {@link NamenodeUnavailableException}.
 *
 * <p>A change (any method but GET: a chunk allocation, a lease) needs the leader. When no URL takes it
 * because the leader just died and no standby leads yet (unreachable or 503 everywhere), the round is
 * repeated every {@link #FAILOVER_PAUSE} for up to {@link #FAILOVER_WAIT}, which outlasts an election
 * (the dead leader's ZooKeeper session expiring): a write to a new chunk waits for the new leader
 * instead of failing. Reads are served by any namenode and fail at once.
 */
public final class NamenodeClient implements ChunkMapSource, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(NamenodeClient.class);
    static final Duration FAILOVER_WAIT = Duration.ofSeconds(10);
    static final Duration FAILOVER_PAUSE = Duration.ofMillis(250);
    private static final ObjectMapper JSON = new ObjectMapper()
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    private final List<URI> baseUrls;
    private final ExecutorService executor;
    private final HttpClient http;
    private final Duration requestTimeout;
    private final AtomicInteger preferred = new AtomicInteger();
    private final String authorization;

    public NamenodeClient(List<String> baseUrls, Duration requestTimeout, int threads) {
        this(baseUrls, requestTimeout, threads, null);
    }

    /** {@code apiToken}: the namenode's bearer token ({@code --api-token}), or null when it has none. */
    public NamenodeClient(List<String> baseUrls, Duration requestTimeout, int threads, String apiToken) {
        if (baseUrls == null || baseUrls.isEmpty()) {
            throw new IllegalArgumentException("at least one namenode URL is required");
        }
        List<URI> uris = new ArrayList<>();
        for (String url : baseUrls) {
            URI uri = URI.create(url.endsWith("/") ? url.substring(0, url.length() - 1) : url);
            if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme())) {
                throw new IllegalArgumentException("namenode URL must be http(s)://host:port, got " + url);
            }
            uris.add(uri);
        }
        this.baseUrls = List.copyOf(uris);
        this.requestTimeout = requestTimeout;
        this.authorization = apiToken == null || apiToken.isEmpty() ? null : "Bearer " + apiToken;
        this.executor = Executors.newFixedThreadPool(Math.max(1, threads), daemonThreads("namenode-http"));
        this.http = HttpClient.newBuilder()
                .executor(executor)
                .version(HttpClient.Version.HTTP_1_1)
                .followRedirects(HttpClient.Redirect.NORMAL)
                .connectTimeout(Duration.ofMillis(Math.min(2000, requestTimeout.toMillis())))
                .build();
    }

    public NamenodeClient(List<String> baseUrls) {
        this(baseUrls, Duration.ofSeconds(5), 2);
    }

    /** The executor futures of this client complete on; also usable for short follow-up work. */
    public ExecutorService executor() {
        return executor;
    }

    public List<URI> baseUrls() {
        return baseUrls;
    }

    public CompletableFuture<Void> health() {
        return call("GET", "/v1/health", null).thenApply(body -> null);
    }

    public CompletableFuture<List<VolumeInfo>> listVolumes() {
        return call("GET", "/v1/volumes", null)
                .thenApply(body -> readList(body, "volumes", VolumeInfo.class));
    }

    /** The volume, or a {@link NamenodeException} with code {@code VOLUME_NOT_FOUND} (404). */
    public CompletableFuture<VolumeInfo> volume(String name) {
        return call("GET", "/v1/volumes/" + encode(name), null).thenApply(body -> read(body, VolumeInfo.class));
    }

    /** The volume, or empty when the namenode says 404. */
    public CompletableFuture<Optional<VolumeInfo>> findVolume(String name) {
        return volume(name).handle((v, err) -> {
            if (err == null) {
                return Optional.of(v);
            }
            Throwable cause = unwrap(err);
            if (cause instanceof NamenodeException ne && ne.httpStatus() == 404) {
                return Optional.<VolumeInfo>empty();
            }
            throw cause instanceof RuntimeException re ? re : new CompletionException(cause);
        });
    }

    /** Creates a volume of {@code sizeBytes}; {@code chunkSize} 0 means the namenode's default. */
    public CompletableFuture<VolumeInfo> createVolume(String name, long sizeBytes, long chunkSize) {
        ObjectNode body = JSON.createObjectNode().put("name", name).put("size", sizeBytes);
        if (chunkSize > 0) {
            body.put("chunkSize", chunkSize);
        }
        return call("POST", "/v1/volumes", body.toString()).thenApply(b -> read(b, VolumeInfo.class));
    }

    public CompletableFuture<Void> deleteVolume(String name) {
        return call("DELETE", "/v1/volumes/" + encode(name), null).thenApply(b -> null);
    }

    public CompletableFuture<List<NodeInfo>> nodes() {
        return call("GET", "/v1/nodes", null).thenApply(body -> readList(body, "nodes", NodeInfo.class));
    }

    public CompletableFuture<List<GroupInfo>> groups() {
        return call("GET", "/v1/groups", null).thenApply(body -> readList(body, "groups", GroupInfo.class));
    }

    /** Whether {@code initiator} may log in to {@code target}, with the CHAP credentials it must present. */
    public CompletableFuture<AccessInfo> access(String target, String initiator) {
        return call("GET", "/v1/gateway/access?target=" + encode(target) + "&initiator=" + encode(initiator), null)
                .thenApply(b -> read(b, AccessInfo.class));
    }

    /** The volume's lease as it stands, without taking it (epoch 0, holder null when never taken). */
    public CompletableFuture<LeaseInfo> currentLease(String volumeName) {
        return call("GET", "/v1/volumes/" + encode(volumeName) + "/lease", null).thenApply(b -> read(b, LeaseInfo.class));
    }

    /**
     * Takes the volume's write lease for {@code gateway}, or with {@code renewEpoch} only renews it
     * (a {@link NamenodeException} with code {@code LEASE_LOST} when it moved to another gateway).
     */
    public CompletableFuture<LeaseInfo> lease(String volumeName, String gateway, Long renewEpoch) {
        ObjectNode body = JSON.createObjectNode().put("gateway", gateway);
        if (renewEpoch != null) {
            body.put("epoch", renewEpoch);
        }
        return call("POST", "/v1/volumes/" + encode(volumeName) + "/lease", body.toString())
                .thenApply(b -> read(b, LeaseInfo.class));
    }

    @Override
    public CompletableFuture<ChunkLocation> lookupChunk(String volumeName, long index) {
        return call("GET", chunkPath(volumeName, index), null).thenApply(b -> checked(read(b, ChunkLocation.class)));
    }

    @Override
    public CompletableFuture<ChunkLocation> allocateChunk(String volumeName, long index) {
        return call("POST", chunkPath(volumeName, index), "").thenApply(b -> {
            ChunkLocation loc = checked(read(b, ChunkLocation.class));
            if (!loc.allocated()) {
                throw new NamenodeException(200, "BAD_RESPONSE", "allocation of chunk " + index + " answered allocated=false");
            }
            return loc;
        });
    }

    /** Chunk {@code index} of layer {@code layer} of the volume's stack, without allocating. */
    public CompletableFuture<ChunkLocation> lookupChunk(String volumeName, long index, long layer) {
        return call("GET", chunkPath(volumeName, index) + "?layer=" + layer, null)
                .thenApply(b -> checked(read(b, ChunkLocation.class)));
    }

    /**
     * Allocates chunk {@code index} in the volume's top layer, which must still be {@code layer}
     * (else a {@link NamenodeException} with code {@code STALE_LAYER}: a snapshot sealed it).
     */
    public CompletableFuture<ChunkLocation> allocateChunk(String volumeName, long index, long layer) {
        return call("POST", chunkPath(volumeName, index) + "?layer=" + layer, "").thenApply(b -> {
            ChunkLocation loc = checked(read(b, ChunkLocation.class));
            if (!loc.allocated()) {
                throw new NamenodeException(200, "BAD_RESPONSE", "allocation of chunk " + index + " answered allocated=false");
            }
            return loc;
        });
    }

    @Override
    public void close() {
        executor.shutdownNow();
        try {
            executor.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String chunkPath(String volumeName, long index) {
        return "/v1/volumes/" + encode(volumeName) + "/chunks/" + index;
    }

    private static ChunkLocation checked(ChunkLocation loc) {
        if (loc.allocated() && (loc.group() == null || loc.group().members().isEmpty())) {
            throw new NamenodeException(200, "BAD_RESPONSE", "chunk " + loc.index() + " allocated but without group members");
        }
        return loc;
    }

    /** Sends the request to the preferred namenode, then the others in order; the body of a 2xx answer. */
    private CompletableFuture<byte[]> call(String method, String path, String jsonBody) {
        int start = preferred.get();
        long failoverDeadline = "GET".equals(method) ? 0 : System.nanoTime() + FAILOVER_WAIT.toNanos();
        return attempt(method, path, jsonBody, start, 0, null, failoverDeadline);
    }

    private CompletableFuture<byte[]> attempt(String method, String path, String jsonBody, int start, int tried,
                                              Throwable lastFailure, long failoverDeadline) {
        if (tried >= baseUrls.size() && failoverDeadline != 0 && System.nanoTime() < failoverDeadline) {
            LOG.debug("no namenode leads for {} {} yet: {}", method, path, String.valueOf(lastFailure));
            return CompletableFuture.supplyAsync(() -> attempt(method, path, jsonBody, start, 0, lastFailure,
                    failoverDeadline), CompletableFuture.delayedExecutor(FAILOVER_PAUSE.toMillis(),
                    TimeUnit.MILLISECONDS, executor)).thenCompose(f -> f);
        }
        if (tried >= baseUrls.size()) {
            return CompletableFuture.failedFuture(new NamenodeUnavailableException(
                    "no namenode reachable at " + baseUrls + " for " + method + " " + path
                            + (lastFailure == null ? "" : ": " + lastFailure), lastFailure));
        }
        int index = (start + tried) % baseUrls.size();
        URI base = baseUrls.get(index);
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path))
                .timeout(requestTimeout)
                .header("Accept", "application/json");
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        if (jsonBody == null) {
            b.method(method, HttpRequest.BodyPublishers.noBody());
        } else {
            b.header("Content-Type", "application/json")
                    .method(method, HttpRequest.BodyPublishers.ofString(jsonBody, StandardCharsets.UTF_8));
        }
        CompletableFuture<HttpResponse<byte[]>> sent;
        try {
            sent = http.sendAsync(b.build(), HttpResponse.BodyHandlers.ofByteArray());
        } catch (RuntimeException e) { // executor shut down
            return CompletableFuture.failedFuture(new NamenodeUnavailableException("namenode client closed", e));
        }
        return sent.handleAsync((resp, err) -> {
            if (err != null) {
                Throwable cause = unwrap(err);
                if (cause instanceof IOException) {
                    LOG.debug("namenode {} unreachable for {} {}: {}", base, method, path, cause.toString());
                    return attempt(method, path, jsonBody, start, tried + 1, cause, failoverDeadline);
                }
                return CompletableFuture.<byte[]>failedFuture(cause);
            }
            if (resp.statusCode() == 503) {
                NamenodeException e = toException(resp);
                return attempt(method, path, jsonBody, start, tried + 1, e, failoverDeadline);
            }
            preferred.set(index);
            if (resp.statusCode() / 100 == 2) {
                return CompletableFuture.completedFuture(resp.body());
            }
            return CompletableFuture.<byte[]>failedFuture(toException(resp));
        }, executor).thenCompose(f -> f);
    }

    static NamenodeException toException(HttpResponse<byte[]> resp) {
        int status = resp.statusCode();
        byte[] body = resp.body() == null ? new byte[0] : resp.body();
        try {
            JsonNode node = JSON.readTree(body);
            if (node != null && node.hasNonNull("code")) {
                return new NamenodeException(status, node.get("code").asText(),
                        node.hasNonNull("message") ? node.get("message").asText() : "");
            }
        } catch (IOException notJson) {
            // fall through: an answer not shaped like the contract (proxy page, crash)
        }
        String text = new String(body, StandardCharsets.UTF_8);
        return new NamenodeException(status, "HTTP_" + status, text.length() > 200 ? text.substring(0, 200) : text);
    }

    private static <T> T read(byte[] body, Class<T> type) {
        try {
            T value = JSON.readValue(body, type);
            if (value == null) {
                throw new NamenodeException(200, "BAD_RESPONSE", "empty " + type.getSimpleName());
            }
            return value;
        } catch (IOException e) {
            throw new NamenodeException(200, "BAD_RESPONSE", "unreadable " + type.getSimpleName() + ": " + e.getMessage());
        }
    }

    private static <T> List<T> readList(byte[] body, String field, Class<T> type) {
        try {
            JsonNode array = JSON.readTree(body).get(field);
            if (array == null || !array.isArray()) {
                throw new NamenodeException(200, "BAD_RESPONSE", "answer has no '" + field + "' array");
            }
            List<T> out = new ArrayList<>(array.size());
            for (JsonNode n : array) {
                out.add(JSON.treeToValue(n, type));
            }
            return List.copyOf(out);
        } catch (IOException e) {
            throw new NamenodeException(200, "BAD_RESPONSE", "unreadable " + field + ": " + e.getMessage());
        }
    }

    private static String encode(String segment) {
        return URLEncoder.encode(segment, StandardCharsets.UTF_8).replace("+", "%20");
    }

    static Throwable unwrap(Throwable t) {
        while ((t instanceof CompletionException || t instanceof java.util.concurrent.ExecutionException)
                && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    static ThreadFactory daemonThreads(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
