package io.fastblock.gateway.client;

/** How a request relates to the volume's recent requests: it decides which replica serves a read. */
public enum AccessPattern {
    RANDOM,
    SEQUENTIAL
}
