package io.fastblock.gateway.iscsi;

import java.util.Objects;

/**
 * The access rule of one target for one initiator: whether it may log in and, when
 * {@link #chap()} is set, the CHAP secrets it must prove (RFC 7143 section 12.1.3).
 *
 * @param allowed false to refuse the login (status 0x0202) and hide the target from SendTargets
 * @param chap    null for no authentication, else the credentials
 */
public record TargetAccess(boolean allowed, Chap chap) {
    /** Anyone may log in, no authentication. */
    public static final TargetAccess OPEN = new TargetAccess(true, null);
    /** Not exported to this initiator. */
    public static final TargetAccess DENIED = new TargetAccess(false, null);

    public static TargetAccess chap(Chap chap) {
        return new TargetAccess(true, Objects.requireNonNull(chap));
    }

    /**
     * CHAP credentials. {@code user}/{@code secret}: what the initiator must answer with (one-way).
     * {@code targetUser}/{@code targetSecret}: what the target answers with when the initiator
     * challenges it (mutual CHAP); both null when mutual CHAP is not configured, in which case an
     * initiator that challenges the target is refused. Secrets are raw bytes of the configured
     * string (UTF-8), as libiscsi and open-iscsi use them.
     */
    public record Chap(String user, String secret, String targetUser, String targetSecret) {
        public Chap {
            Objects.requireNonNull(user, "user");
            Objects.requireNonNull(secret, "secret");
            if ((targetUser == null) != (targetSecret == null)) {
                throw new IllegalArgumentException("targetUser and targetSecret go together");
            }
        }

        public static Chap oneWay(String user, String secret) {
            return new Chap(user, secret, null, null);
        }

        public boolean mutual() {
            return targetUser != null;
        }

        @Override
        public String toString() {
            return "Chap[user=" + user + (mutual() ? " targetUser=" + targetUser : "") + "]"; // no secrets in logs
        }
    }
}
