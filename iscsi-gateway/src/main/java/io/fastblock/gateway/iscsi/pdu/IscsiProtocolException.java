package io.fastblock.gateway.iscsi.pdu;

/** The byte stream is not iSCSI we can parse; the connection cannot continue. */
public class IscsiProtocolException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public IscsiProtocolException(String message) {
        super(message);
    }
}
