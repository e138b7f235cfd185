package io.fastblock.gateway.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * {@code GET /metrics}: the gateway's meters in Prometheus' text format ({@code --metrics-port}). A
 * scraper asks every few seconds, so one thread serves it, apart from the iSCSI event loops.
 */
public final class MetricsEndpoint implements AutoCloseable {
    public static final String PATH = "/metrics";
    /** What Prometheus asks for when it scrapes the text format. */
    static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    static {
        // The JDK server writes headers and body in two segments; with Nagle's algorithm on, a scraper
        // that keeps its connection would wait 40 ms for its own delayed ACK (as the namenode's HttpApi notes).
        if (System.getProperty("sun.net.httpserver.nodelay") == null) {
            System.setProperty("sun.net.httpserver.nodelay", "true");
        }
    }

    private final HttpServer server;
    private final ExecutorService thread;
    private final PrometheusMeterRegistry registry;

    private MetricsEndpoint(HttpServer server, ExecutorService thread, PrometheusMeterRegistry registry) {
        this.server = server;
        this.thread = thread;
        this.registry = registry;
    }

    /** Serves {@code registry} on {@code host:port} (port 0: any free port, see {@link #port()}). */
    public static MetricsEndpoint start(String host, int port, PrometheusMeterRegistry registry) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress(host, port), 16);
        ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "metrics-http");
            t.setDaemon(true);
            return t;
        });
        MetricsEndpoint endpoint = new MetricsEndpoint(server, thread, registry);
        server.createContext("/", endpoint::handle);
        server.setExecutor(thread);
        server.start();
        return endpoint;
    }

    public int port() {
        return server.getAddress().getPort();
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            String path = exchange.getRequestURI().getPath();
            String method = exchange.getRequestMethod();
            if (!PATH.equals(path)) {
                reply(exchange, 404, "no such path: " + path + " (the metrics are at " + PATH + ")\n", false);
            } else if (!method.equals("GET") && !method.equals("HEAD")) {
                exchange.getResponseHeaders().set("Allow", "GET, HEAD");
                reply(exchange, 405, "method " + method + " not allowed on " + PATH + ": use GET\n", false);
            } else {
                exchange.getResponseHeaders().set("Content-Type", CONTENT_TYPE);
                reply(exchange, 200, registry.scrape(), method.equals("HEAD"));
            }
        }
    }

    private static void reply(HttpExchange exchange, int status, String body, boolean headOnly) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        if (!exchange.getResponseHeaders().containsKey("Content-Type")) {
            exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
        }
        if (headOnly) {
            exchange.sendResponseHeaders(status, -1);
            return;
        }
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    @Override
    public void close() {
        server.stop(0);
        thread.shutdownNow();
    }
}
