package io.fastblock.protocol.meta;

/**
 * Permission for one initiator to log in to a volume's target (an attachment, in Cinder's words).
 * {@code initiator} is an IQN or {@link #ANY_INITIATOR}. {@code chapUser}/{@code chapSecret} are
 * the credentials the initiator must present (null: no CHAP); {@code targetUser}/{@code targetSecret}
 * the ones the target presents back for mutual CHAP (null: one-way). {@code host} is the compute
 * host the driver was told about (informational, may be null). Times are ISO-8601 UTC.
 */
public record ExportRecord(String volume, String initiator, String host, String chapUser, String chapSecret,
                           String targetUser, String targetSecret, String createdAt) {
    public static final String ANY_INITIATOR = "*";

    public boolean chap() {
        return chapUser != null;
    }

    public boolean mutualChap() {
        return targetUser != null;
    }
}
