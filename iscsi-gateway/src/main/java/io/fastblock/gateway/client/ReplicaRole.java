package io.fastblock.gateway.client;

/** Which chain position a read was sent to. */
public enum ReplicaRole {
    HEAD,
    MIDDLE,
    /** Only on a retry, when the head and the middle did not answer. */
    TAIL
}
