package io.fastblock.gateway.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.gateway.GatewayConfig;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The endpoint over a real socket, asked as a scraper and as a mistaken client would. */
class MetricsEndpointTest {
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private PrometheusMeterRegistry registry;
    private MetricsEndpoint endpoint;

    @BeforeEach
    void start() throws Exception {
        registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        endpoint = MetricsEndpoint.start("127.0.0.1", 0, registry);
    }

    @AfterEach
    void stop() {
        endpoint.close();
        registry.close();
    }

    private HttpResponse<String> send(String method, String path) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + endpoint.port() + path))
                .method(method, HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(10)).build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aScrapeSeesEveryMeterAsItIsNow() throws Exception {
        registry.counter("fastblock.gateway.reads", "volume", "vol1", "route", "head").increment(3);
        HttpResponse<String> first = send("GET", "/metrics");
        assertEquals(200, first.statusCode());
        assertEquals(MetricsEndpoint.CONTENT_TYPE, first.headers().firstValue("Content-Type").orElseThrow());
        assertTrue(first.body().contains("fastblock_gateway_reads_total{route=\"head\",volume=\"vol1\"} 3.0"),
                first.body());
        registry.counter("fastblock.gateway.reads", "volume", "vol1", "route", "head").increment();
        assertTrue(send("GET", "/metrics").body().contains("fastblock_gateway_reads_total{route=\"head\",volume=\"vol1\"} 4.0"),
                "a second scrape on the kept connection reads the counter again");
        HttpResponse<String> head = send("HEAD", "/metrics");
        assertEquals(200, head.statusCode());
        assertEquals("", head.body());
    }

    @Test
    void otherPathsAndMethodsAreRefusedWithAReason() throws Exception {
        HttpResponse<String> missing = send("GET", "/metric");
        assertEquals(404, missing.statusCode());
        assertTrue(missing.body().contains("no such path: /metric (the metrics are at /metrics)"), missing.body());
        HttpResponse<String> post = send("POST", "/metrics");
        assertEquals(405, post.statusCode());
        assertEquals("GET, HEAD", post.headers().firstValue("Allow").orElseThrow());
        assertTrue(post.body().contains("method POST not allowed on /metrics"), post.body());
        assertEquals(200, send("GET", "/metrics").statusCode(), "the endpoint still serves after refusals");
    }

    @Test
    void theGatewayServesItsAndItsJvmsMetersOnlyWhenAsked() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        try (io.fastblock.gateway.Gateway off = io.fastblock.gateway.Gateway.start(
                GatewayConfig.fromArgs("--port=0", "--namenode=http://127.0.0.1:1"))) {
            assertEquals(0, off.metricsPort());
        }
        try (io.fastblock.gateway.Gateway on = io.fastblock.gateway.Gateway.start(
                GatewayConfig.fromArgs("--port=0", "--namenode=http://127.0.0.1:1", "--metrics-port=" + port))) {
            assertEquals(port, on.metricsPort());
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode());
            for (String name : new String[] {"fastblock_gateway_chunk_map_entries ", "fastblock_gateway_chunk_map_evictions_total ",
                    "jvm_buffer_memory_used_bytes{id=\"direct\"}", "jvm_gc_memory_allocated_bytes_total ", "process_cpu_usage ",
                    "process_files_open_files "}) {
                assertTrue(r.body().contains(name), name + " in\n" + r.body());
            }
            // A second gateway on the same metrics port fails to start, naming the flag.
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> io.fastblock.gateway.Gateway.start(
                    GatewayConfig.fromArgs("--port=0", "--namenode=http://127.0.0.1:1", "--metrics-port=" + port)));
            assertTrue(e.getMessage().startsWith("--metrics-port: cannot listen on 127.0.0.1:" + port), e.getMessage());
        }
    }
}
