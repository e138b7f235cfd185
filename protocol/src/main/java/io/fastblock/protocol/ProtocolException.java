package io.fastblock.protocol;

/** A frame that cannot be decoded; the connection that sent it should be closed. */
public class ProtocolException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ProtocolException(String message) {
        super(message);
    }
}
