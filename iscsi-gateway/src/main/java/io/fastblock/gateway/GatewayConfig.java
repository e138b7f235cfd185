package io.fastblock.gateway;

import io.fastblock.protocol.Ports;
import io.fastblock.protocol.config.CommandLine;
import java.util.Arrays;
import java.util.List;

/**
 * Everything a gateway can be told, with defaults for one machine.
 *
 * @param listenHost     address the iSCSI portal binds (127.0.0.1 by default: never exposed by accident)
 * @param iscsiPort      TCP port of the portal
 * @param portalAddress  address advertised in SendTargets (host:port), defaults to listenHost:iscsiPort
 * @param namenodeUrls   base URLs of the namenodes (http://host:port), tried in order
 * @param queueDepth     commands a session may have outstanding (the CmdSN window)
 */
public record GatewayConfig(String listenHost, int iscsiPort, String portalAddress, List<String> namenodeUrls,
                            int queueDepth) {

    public static GatewayConfig defaults() {
        return fromArgs();
    }

    public static GatewayConfig fromArgs(String... args) {
        CommandLine cl = CommandLine.parse(args);
        String host = cl.get("listen", "127.0.0.1");
        int port = cl.getInt("port", Ports.ISCSI);
        String portal = cl.get("portal", host + ":" + port);
        String urls = cl.get("namenode", "http://127.0.0.1:" + Ports.NAMENODE_HTTP);
        int qd = cl.getInt("queue-depth", 128);
        cl.rejectUnknown();
        if (qd < 1 || qd > 4096) {
            throw new IllegalArgumentException("--queue-depth must be 1..4096, got " + qd);
        }
        return new GatewayConfig(host, port, portal,
                Arrays.stream(urls.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList(), qd);
    }
}
