package io.fastblock.gateway.client;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/** The namenode's answer to "may this initiator log in to this target" ({@code GET /v1/gateway/access}). */
@JsonIgnoreProperties(ignoreUnknown = true)
public record AccessInfo(boolean allowed, String target, String initiator, String volume, Chap chap, String reason) {
    /** CHAP credentials; {@code targetUser}/{@code targetSecret} null unless mutual. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record Chap(String user, String secret, String targetUser, String targetSecret) {
    }
}
