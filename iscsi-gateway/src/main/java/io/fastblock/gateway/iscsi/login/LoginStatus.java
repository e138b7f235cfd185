package io.fastblock.gateway.iscsi.login;

/** Login Response Status-Class and Status-Detail (RFC 7143 section 11.13.5) as one 16-bit value. */
public final class LoginStatus {
    private LoginStatus() {
    }

    public static final int SUCCESS = 0x0000;
    public static final int INITIATOR_ERROR = 0x0200;
    public static final int AUTHENTICATION_FAILURE = 0x0201;
    public static final int AUTHORIZATION_FAILURE = 0x0202;
    public static final int TARGET_NOT_FOUND = 0x0203;
    public static final int UNSUPPORTED_VERSION = 0x0205;
    public static final int TOO_MANY_CONNECTIONS = 0x0206;
    public static final int MISSING_PARAMETER = 0x0207;
    public static final int SESSION_TYPE_NOT_SUPPORTED = 0x0209;
    public static final int SESSION_DOES_NOT_EXIST = 0x020A;
    public static final int INVALID_DURING_LOGIN = 0x020B;
    public static final int TARGET_ERROR = 0x0300;
    public static final int SERVICE_UNAVAILABLE = 0x0301;

    public static int statusClass(int status) {
        return status >>> 8;
    }

    public static int statusDetail(int status) {
        return status & 0xff;
    }
}
