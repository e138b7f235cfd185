package io.fastblock.namenode.fencing;

/** Some live storage servers did not confirm a lease fence; the new holder must not be told it holds the lease. */
public final class FenceIncompleteException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public FenceIncompleteException(long writeId, long epoch, String detail) {
        super("could not fence write id " + writeId + " at epoch " + epoch + " on every live storage server (" + detail
                + "); the floor is recorded in ZooKeeper, ask again");
    }
}
