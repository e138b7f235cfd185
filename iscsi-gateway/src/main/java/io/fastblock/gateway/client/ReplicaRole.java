package io.fastblock.gateway.client;

/** Which chain position a read was sent to. */
public enum ReplicaRole {
    HEAD,
    MIDDLE
}
