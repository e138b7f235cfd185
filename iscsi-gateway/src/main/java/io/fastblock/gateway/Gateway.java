package io.fastblock.gateway;

import io.fastblock.protocol.config.CommandLine;
import io.fastblock.gateway.client.FastClient;
import io.fastblock.gateway.iscsi.IscsiServer;
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

    private Gateway(FastClient client, IscsiServer server) {
        this.client = client;
        this.server = server;
    }

    public static Gateway start(GatewayConfig config) throws InterruptedException {
        FastClient client = new FastClient(config);
        IscsiServer server = new IscsiServer(config, client);
        try {
            server.start();
            client.storage().attachTo(server.eventLoops());
        } catch (RuntimeException | InterruptedException e) {
            client.close();
            throw e;
        }
        return new Gateway(client, server);
    }

    public int port() {
        return server.port();
    }

    /** Closes the portal (and with it every session) before the client its sessions use. */
    @Override
    public void close() {
        server.close();
        client.close();
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
