package io.fastblock.namenode.capacity;

/** More bytes would bring the provisioned total over the thin-provisioning limit (507 INSUFFICIENT_CAPACITY). */
public class InsufficientCapacityException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public InsufficientCapacityException(String message) {
        super(message);
    }
}
