package io.fastblock.namenode.placement;

/** No replication group can take a new chunk: each has a member under the free-space floor (507 INSUFFICIENT_SPACE). */
public class InsufficientSpaceException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public InsufficientSpaceException(String message) {
        super(message);
    }
}
