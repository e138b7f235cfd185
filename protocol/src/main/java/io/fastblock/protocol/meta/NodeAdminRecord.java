package io.fastblock.protocol.meta;

/**
 * The operator's intent for a storage node, kept apart from its self-written {@link NodeRecord}
 * so a re-registering server never overwrites it. {@code active}: takes part in placement;
 * {@code draining}: being moved out of its groups; {@code decommissioned}: in no group, never
 * chosen again.
 */
public record NodeAdminRecord(String id, String state) {
    public static final String ACTIVE = "active";
    public static final String DRAINING = "draining";
    public static final String DECOMMISSIONED = "decommissioned";
}
