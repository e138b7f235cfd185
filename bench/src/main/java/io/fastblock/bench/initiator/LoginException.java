package io.fastblock.bench.initiator;

/** The target refused the login (status class/detail as RFC 7143 section 11.13.5 numbers them) or broke its rules. */
public final class LoginException extends Exception {
    private static final long serialVersionUID = 1L;

    private final int statusClass;
    private final int statusDetail;

    public LoginException(String message, int statusClass, int statusDetail) {
        super(message);
        this.statusClass = statusClass;
        this.statusDetail = statusDetail;
    }

    /** Status-Class << 8 | Status-Detail, e.g. 0x0201 for an authentication failure; -1 when not a status. */
    public int status() {
        return statusClass < 0 ? -1 : (statusClass << 8) | statusDetail;
    }
}
