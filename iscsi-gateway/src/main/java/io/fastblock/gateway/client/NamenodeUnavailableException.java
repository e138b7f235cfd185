package io.fastblock.gateway.client;

/** No configured namenode could be reached (connection failures, timeouts or 503 from every URL). */
public class NamenodeUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public NamenodeUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
