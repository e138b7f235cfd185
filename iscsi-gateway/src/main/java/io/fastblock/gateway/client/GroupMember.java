package io.fastblock.gateway.client;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/** One storage node of a replication group, as the namenode reports it. */
@JsonIgnoreProperties(ignoreUnknown = true)
public record GroupMember(String id, String host, int port, boolean live) {
    public NodeAddress address() {
        return new NodeAddress(host, port);
    }
}
