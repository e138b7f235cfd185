package io.fastblock.namenode.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * Requests on one keep-alive connection are answered without waiting for the client's delayed ACK.
 * The JDK server wrote each response as headers, then body, with Nagle's algorithm on, and the body
 * waited for the client's delayed ACK: without the fix every one of this test's 20 requests took
 * 44 ms (Python's http.client saw it from its second request on).
 * A client here that sets TCP_NODELAY itself (as curl, Python and the gateway's HttpClient do), so
 * only the server's side is under test. The bound is the median of 20 requests, half the delayed
 * ACK: a slow machine's outliers do not fail it, the stall does.
 */
class KeepAliveLatencyTest {

    @Test
    void answersOnAKeptConnectionDoNotWaitForADelayedAck() throws Exception {
        Router router = new Router().add("GET", "/v1/ping", r -> ApiResponse.ok(java.util.Map.of("pong", true)));
        HttpApi api = HttpApi.start("127.0.0.1", 0, router);
        try (Socket s = new Socket("127.0.0.1", api.port())) {
            s.setTcpNoDelay(true);
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            InputStream in = s.getInputStream();
            long[] micros = new long[20];
            for (int i = 0; i < micros.length; i++) {
                long t0 = System.nanoTime();
                out.write("GET /v1/ping HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
                String response = readResponse(in);
                micros[i] = (System.nanoTime() - t0) / 1000;
                assertTrue(response.startsWith("HTTP/1.1 200"), response);
                assertTrue(response.contains("\"pong\"") && response.contains("true"), response);
            }
            long[] sorted = micros.clone();
            Arrays.sort(sorted);
            assertTrue(sorted[sorted.length / 2] < 20_000,
                    "median " + sorted[sorted.length / 2] + " µs per request on a kept connection: " + Arrays.toString(micros));
        } finally {
            api.close();
        }
        assertEquals("true", System.getProperty(HttpApi.NODELAY_PROPERTY));
    }

    /** One response with a Content-Length body. */
    private static String readResponse(InputStream in) throws Exception {
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int c = in.read();
            if (c < 0) {
                throw new IllegalStateException("closed after " + head);
            }
            head.append((char) c);
        }
        int length = 0;
        for (String line : head.toString().split("\r\n")) {
            if (line.toLowerCase().startsWith("content-length:")) {
                length = Integer.parseInt(line.substring(15).trim());
            }
        }
        byte[] body = in.readNBytes(length);
        return head + new String(body, StandardCharsets.UTF_8);
    }
}
