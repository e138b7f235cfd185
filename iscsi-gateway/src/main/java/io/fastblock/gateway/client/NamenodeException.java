package io.fastblock.gateway.client;

/** The namenode answered with an error: its HTTP status and the contract's {@code code} and {@code message}. */
public class NamenodeException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int httpStatus;
    private final String code;

    public NamenodeException(int httpStatus, String code, String message) {
        super(code + " (HTTP " + httpStatus + "): " + message);
        this.httpStatus = httpStatus;
        this.code = code;
    }

    public int httpStatus() {
        return httpStatus;
    }

    /** UPPER_SNAKE_CASE error code, e.g. {@code VOLUME_NOT_FOUND}; {@code HTTP_<status>} if the body was not contract JSON. */
    public String code() {
        return code;
    }

    /** The namenode's human-readable message (without code and status). */
    public String detail() {
        String m = getMessage();
        int i = m.indexOf("): ");
        return i < 0 ? m : m.substring(i + 3);
    }
}
