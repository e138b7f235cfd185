package io.fastblock.namenode.meta;

/** A snapshot of that name exists on the volume (made without the same client id). */
public final class SnapshotExistsException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public SnapshotExistsException(String volume, String snapshot) {
        super("volume '" + volume + "' already has a snapshot named '" + snapshot + "'");
    }
}
