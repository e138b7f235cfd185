package io.fastblock.namenode.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fastblock.namenode.NameNode;
import io.fastblock.namenode.NameNodeConfig;
import io.fastblock.namenode.TestHttp;
import io.fastblock.namenode.TestHttp.Reply;
import java.io.InputStream;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.TrustManagerFactory;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bearer token on every route but health, and the API over HTTPS with a real certificate. */
class AuthAndTlsTest {
    private static final String TOKEN = "s3cret-token";

    @TempDir
    Path dir;

    @Test
    void everyRouteButHealthNeedsTheToken() throws Exception {
        try (TestingServer zk = new TestingServer(true);
             NameNode nn = NameNode.start(NameNodeConfig.fromArgs("--data-dir=" + dir, "--http-port=0",
                     "--zk=" + zk.getConnectString(), "--api-token=" + TOKEN, "--oversubscription=0"))) {
            TestHttp anonymous = new TestHttp(nn.baseUrl());
            TestHttp wrong = new TestHttp(nn.baseUrl(), "guess", HttpClient.newHttpClient());
            TestHttp right = new TestHttp(nn.baseUrl(), TOKEN, HttpClient.newHttpClient());
            assertEquals(200, anonymous.get("/v1/health").status());
            for (String path : new String[] {"/v1/status", "/v1/volumes", "/v1/nodes", "/v1/groups", "/v1/tenants",
                "/v1/gateway/access?target=x&initiator=y", "/v1/no-such-route"}) {
                Reply r = anonymous.get(path);
                assertEquals(401, r.status(), path + " " + r);
                assertEquals("UNAUTHORIZED", r.code());
                assertTrue(r.raw().headers().firstValue("WWW-Authenticate").orElse("").startsWith("Bearer"));
                assertEquals(401, wrong.get(path).status(), path);
            }
            Reply create = anonymous.post("/v1/volumes", "{\"name\":\"v\",\"size\":\"1G\"}");
            assertEquals(401, create.status());
            assertEquals(401, wrong.post("/v1/volumes", "{\"name\":\"v\",\"size\":\"1G\"}").status());
            assertEquals(201, right.post("/v1/volumes", "{\"name\":\"v\",\"size\":\"1G\"}").status());
            assertEquals(200, right.get("/v1/volumes/v").status());
        }
    }

    @Test
    void servesHttpsWithTheConfiguredKeystore() throws Exception {
        Path keystore = dir.resolve("nn.p12");
        Process keytool = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair", "-alias", "namenode", "-keyalg", "EC", "-groupname", "secp256r1",
                "-dname", "CN=127.0.0.1", "-ext", "SAN=ip:127.0.0.1", "-validity", "2", "-storetype", "PKCS12",
                "-keystore", keystore.toString(), "-storepass", "changeit", "-keypass", "changeit")
                .redirectErrorStream(true).start();
        assertTrue(keytool.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, keytool.exitValue(), new String(keytool.getInputStream().readAllBytes()));

        try (TestingServer zk = new TestingServer(true);
             NameNode nn = NameNode.start(NameNodeConfig.fromArgs("--data-dir=" + dir.resolve("d"), "--http-port=0",
                     "--zk=" + zk.getConnectString(), "--tls-keystore=" + keystore, "--tls-password=changeit",
                     "--oversubscription=0"))) {
            assertTrue(nn.baseUrl().startsWith("https://127.0.0.1:"), nn.baseUrl());
            KeyStore trust = KeyStore.getInstance("PKCS12");
            try (InputStream in = Files.newInputStream(keystore)) {
                trust.load(in, "changeit".toCharArray());
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trust);
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(null, tmf.getTrustManagers(), null);
            TestHttp https = new TestHttp(nn.baseUrl(), null,
                    HttpClient.newBuilder().sslContext(ctx).connectTimeout(Duration.ofSeconds(10)).build());
            assertEquals(200, https.get("/v1/health").status());
            assertEquals(201, https.post("/v1/volumes", "{\"name\":\"v\",\"size\":\"1G\"}").status());
            // A client that does not trust the certificate cannot talk to it.
            TestHttp untrusting = new TestHttp(nn.baseUrl(), null, HttpClient.newHttpClient());
            assertThrows(SSLHandshakeException.class, () -> untrusting.get("/v1/health"));
            // Plain HTTP to the TLS port gets no API answer.
            TestHttp plain = new TestHttp(nn.baseUrl().replace("https", "http"));
            assertThrows(java.io.IOException.class, () -> plain.get("/v1/health"));
        }
    }
}
