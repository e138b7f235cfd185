package io.fastblock.gateway;

import io.fastblock.protocol.config.CommandLine;
import io.fastblock.gateway.client.FastClient;
import io.fastblock.gateway.iscsi.IscsiServer;
import io.fastblock.gateway.metrics.GatewayMeters;
import io.fastblock.gateway.metrics.MetricsEndpoint;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gateway process: an iSCSI portal whose targets are the cluster's volumes, served through
 * the FAST client. One runs on every compute node.
 */
public final class Gateway implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Gateway.class);

    private final FastClient client;
    private final IscsiServer server;
    private final GatewayMeters meters;
    private final MetricsEndpoint metrics;

    private Gateway(FastClient client, IscsiServer server, GatewayMeters meters, MetricsEndpoint metrics) {
        this.client = client;
        this.server = server;
        this.meters = meters;
        this.metrics = metrics;
    }

    public static Gateway start(GatewayConfig config) throws InterruptedException {
        GatewayMeters meters = config.metricsPort() > 0 ? new GatewayMeters() : null;
        FastClient client = meters == null ? new FastClient(config) : new FastClient(config, meters.registry());
        IscsiServer server = new IscsiServer(config, client);
        MetricsEndpoint metrics = null;
        try {
            server.start();
            client.storage().attachTo(server.eventLoops());
            if (meters != null) {
                metrics = startMetrics(config, meters);
            }
        } catch (RuntimeException | InterruptedException e) {
            server.close();
            client.close();
            if (meters != null) {
                meters.close();
            }
            throw e;
        }
        return new Gateway(client, server, meters, metrics);
    }

    private static MetricsEndpoint startMetrics(GatewayConfig config, GatewayMeters meters) {
        try {
            MetricsEndpoint endpoint = MetricsEndpoint.start(config.listenHost(), config.metricsPort(), meters.registry());
            LOG.info("metrics at http://{}:{}{}", config.listenHost(), endpoint.port(), MetricsEndpoint.PATH);
            return endpoint;
        } catch (java.io.IOException e) {
            throw new IllegalStateException("--metrics-port: cannot listen on " + config.listenHost() + ":"
                    + config.metricsPort() + ": " + e.getMessage(), e);
        }
    }

    public int port() {
        return server.port();
    }

    /** The port of {@code GET /metrics}, or 0 when the gateway serves none. */
    public int metricsPort() {
        return metrics == null ? 0 : metrics.port();
    }

    /** Closes the portal (and with it every session) before the client its sessions use. */
    @Override
    public void close() {
        if (metrics != null) {
            metrics.close();
        }
        server.close();
        client.close();
        if (meters != null) {
            meters.close();
        }
    }

    public static void main(String[] args) throws InterruptedException {
        io.fastblock.protocol.codec.BufferPoolDefaults.serverDefault(); // before any pooled buffer
        io.fastblock.protocol.codec.BufferLeakDetection.serverDefault();
        GatewayConfig config;
        if (CommandLine.wantsHelp(args)) {
            System.out.print(GatewayConfig.usage());
            return;
        }
        io.fastblock.protocol.codec.BufferPoolDefaults.zeroedChunksWarning().ifPresent(LOG::warn);
        try {
            config = GatewayConfig.fromArgs(args);
        } catch (IllegalArgumentException e) {
            System.err.println("gateway: " + e.getMessage());
            System.exit(2);
            return;
        }
        Gateway gateway = start(config);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            gateway.close();
            stopped.countDown();
        }, "gateway-shutdown"));
        System.out.println("READY gateway iscsi://" + config.listenHost() + ":" + gateway.port());
        System.out.flush();
        stopped.await();
    }
}
