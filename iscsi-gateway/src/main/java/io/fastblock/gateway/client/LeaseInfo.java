package io.fastblock.gateway.client;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/** A volume's write lease as the namenode granted it ({@code POST /v1/volumes/{name}/lease}). */
@JsonIgnoreProperties(ignoreUnknown = true)
public record LeaseInfo(String volume, long volumeId, String holder, long epoch, String expiresAt, long ttlMs) {
}
