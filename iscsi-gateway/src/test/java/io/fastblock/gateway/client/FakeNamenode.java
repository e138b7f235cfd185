package io.fastblock.gateway.client;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ExecutorService;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** A namenode speaking the v1 REST contract from memory: volumes and one replication group. */
final class FakeNamenode implements AutoCloseable {
    private static final Pattern CHUNK = Pattern.compile("/v1/volumes/([^/]+)/chunks/(-?\\d+)");
    private static final Pattern VOLUME = Pattern.compile("/v1/volumes/([^/]+)");

    final Map<String, long[]> volumes = new ConcurrentHashMap<>(); // name -> {id, size, chunkSize}
    final Set<String> allocated = ConcurrentHashMap.newKeySet();
    final List<String> requests = new CopyOnWriteArrayList<>();
    volatile String groupJson;
    volatile int forcedStatus; // 0 = answer normally
    private final HttpServer server;
    private final ExecutorService executor = Executors.newFixedThreadPool(2);

    static {
        // As the real namenode (HttpApi) does: without it every call on a kept connection waits 40 ms
        // for the client's delayed ACK of the response headers.
        if (System.getProperty("sun.net.httpserver.nodelay") == null) {
            System.setProperty("sun.net.httpserver.nodelay", "true");
        }
    }

    FakeNamenode(List<NodeAddress> chain) throws IOException {
        setChain(1, chain);
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/v1/", this::handle);
        server.setExecutor(executor);
        server.start();
    }

    void setChain(long version, List<NodeAddress> chain) {
        StringBuilder members = new StringBuilder();
        for (int i = 0; i < chain.size(); i++) {
            NodeAddress a = chain.get(i);
            members.append(i == 0 ? "" : ",").append("{\"id\":\"storage-").append(i + 1).append("\",\"host\":\"")
                    .append(a.host()).append("\",\"port\":").append(a.port()).append(",\"live\":true}");
        }
        groupJson = "{\"id\":1,\"chainVersion\":" + version + ",\"members\":[" + members + "]}";
    }

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    void addVolume(String name, long id, long size, long chunkSize) {
        volumes.put(name, new long[] {id, size, chunkSize});
    }

    private String volumeJson(String name, long[] v) {
        return "{\"id\":" + v[0] + ",\"name\":\"" + name + "\",\"size\":" + v[1] + ",\"blockSize\":512,\"chunkSize\":"
                + v[2] + ",\"iqn\":\"iqn.2026-11.io.fastblock:" + name + "\",\"state\":\"available\","
                + "\"createdAt\":\"2026-11-21T10:00:00Z\",\"allocatedChunks\":0,\"futureField\":[1,2]}";
    }

    private void handle(HttpExchange ex) throws IOException {
        String method = ex.getRequestMethod();
        String path = ex.getRequestURI().getPath();
        requests.add(method + " " + path);
        ex.getRequestBody().readAllBytes();
        if (forcedStatus != 0) {
            send(ex, forcedStatus, forcedStatus == 503 ? "{\"code\":\"NOT_LEADER\",\"message\":\"standby\"}" : "oops");
            return;
        }
        Matcher chunk = CHUNK.matcher(path);
        Matcher volume = VOLUME.matcher(path);
        if (path.equals("/v1/health")) {
            send(ex, 200, "{\"status\":\"ok\"}");
        } else if (path.equals("/v1/volumes") && method.equals("GET")) {
            StringBuilder sb = new StringBuilder("{\"volumes\":[");
            String sep = "";
            for (Map.Entry<String, long[]> e : volumes.entrySet()) {
                sb.append(sep).append(volumeJson(e.getKey(), e.getValue()));
                sep = ",";
            }
            send(ex, 200, sb.append("]}").toString());
        } else if (chunk.matches()) {
            long[] v = volumes.get(chunk.group(1));
            long index = Long.parseLong(chunk.group(2));
            if (v == null) {
                send(ex, 404, "{\"code\":\"VOLUME_NOT_FOUND\",\"message\":\"no volume " + chunk.group(1) + "\"}");
            } else if (index < 0 || index >= (v[1] + v[2] - 1) / v[2]) {
                send(ex, 400, "{\"code\":\"INVALID_CHUNK_INDEX\",\"message\":\"chunk index " + index + " out of range\"}");
            } else {
                String key = chunk.group(1) + "/" + index;
                if (method.equals("POST")) {
                    allocated.add(key);
                }
                boolean a = allocated.contains(key);
                send(ex, 200, "{\"index\":" + index + ",\"allocated\":" + a + ",\"group\":" + (a ? groupJson : "null") + "}");
            }
        } else if (path.endsWith("/lease") && method.equals("POST") && volumes.containsKey(
                path.substring("/v1/volumes/".length(), path.length() - "/lease".length()))) {
            // Every gateway gets epoch 1: these tests are about the data path, leases are tested on a real namenode.
            String name = path.substring("/v1/volumes/".length(), path.length() - "/lease".length());
            send(ex, 200, "{\"volume\":\"" + name + "\",\"volumeId\":" + volumes.get(name)[0]
                    + ",\"holder\":\"gw\",\"epoch\":1,\"expiresAt\":\"2026-11-21T10:00:00Z\",\"ttlMs\":15000}");
        } else if (volume.matches() && method.equals("GET")) {
            long[] v = volumes.get(volume.group(1));
            if (v == null) {
                send(ex, 404, "{\"code\":\"VOLUME_NOT_FOUND\",\"message\":\"no volume " + volume.group(1) + "\"}");
            } else {
                send(ex, 200, volumeJson(volume.group(1), v));
            }
        } else {
            send(ex, 404, "{\"code\":\"NOT_FOUND\",\"message\":\"no route " + method + " " + path + "\"}");
        }
    }

    private static void send(HttpExchange ex, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(bytes);
        }
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
