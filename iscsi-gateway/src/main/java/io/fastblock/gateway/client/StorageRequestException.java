package io.fastblock.gateway.client;

/** A storage request that got no answer. */
public class StorageRequestException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public enum Kind {
        /** No connection could be made to the node. Nothing was sent. */
        CONNECT_FAILED,
        /** The connection dropped before the answer came. The request may or may not have been applied. */
        CONNECTION_LOST,
        /** No answer within the request timeout. The request may or may not have been applied. */
        TIMEOUT,
        /** The client was shut down. */
        CLIENT_CLOSED
    }

    private final Kind kind;
    private final NodeAddress node;

    public StorageRequestException(Kind kind, NodeAddress node, String message, Throwable cause) {
        super(kind + " " + node + ": " + message, cause);
        this.kind = kind;
        this.node = node;
    }

    public Kind kind() {
        return kind;
    }

    public NodeAddress node() {
        return node;
    }
}
