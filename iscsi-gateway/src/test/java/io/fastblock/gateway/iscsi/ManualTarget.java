package io.fastblock.gateway.iscsi;

import io.fastblock.gateway.GatewayConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Starts a portal with one file-backed 64 MiB target for running external tools by hand (e.g.
 * the conformance suite): {@code java ... ManualTarget [port [thin]]}. Not a test.
 */
public final class ManualTarget {
    public static final String IQN = "iqn.2026-11.io.fastblock:manual";

    public static void main(String[] args) throws Exception {
        int port = args.length > 0 ? Integer.parseInt(args[0]) : 0;
        boolean thin = args.length > 1 && args[1].equals("thin");
        Path dir = Files.createTempDirectory("fastblock-manual");
        FileTargetCatalog catalog = new FileTargetCatalog(Map.of(IQN, dir.resolve("lun0.img")), 64L << 20);
        catalog.thin = thin;
        IscsiServer server = new IscsiServer(GatewayConfig.fromArgs("--port=" + port), catalog).start();
        System.out.println("READY iscsi iscsi://127.0.0.1:" + server.port() + "/" + IQN + "/0");
        Runtime.getRuntime().addShutdownHook(new Thread(server::close));
        Thread.currentThread().join();
    }
}
