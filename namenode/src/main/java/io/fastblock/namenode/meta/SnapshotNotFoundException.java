package io.fastblock.namenode.meta;

/** The volume has no snapshot of that name. */
public final class SnapshotNotFoundException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public SnapshotNotFoundException(String volume, String snapshot) {
        super("volume '" + volume + "' has no snapshot named '" + snapshot + "'");
    }
}
