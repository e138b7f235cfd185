package io.fastblock.gateway.client;

/** A storage node's protocol endpoint; the gateway keeps one connection per address. */
public record NodeAddress(String host, int port) {
    public NodeAddress {
        if (host == null || host.isBlank()) {
            throw new IllegalArgumentException("storage node host must not be empty");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("storage node port must be 1..65535, got " + port);
        }
    }

    @Override
    public String toString() {
        return host + ":" + port;
    }
}
