package io.fastblock.gateway.client;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/** A storage node as listed by {@code GET /v1/nodes}. */
@JsonIgnoreProperties(ignoreUnknown = true)
public record NodeInfo(String id, String host, int port, boolean live, long capacityBytes, long freeBytes) {
}
