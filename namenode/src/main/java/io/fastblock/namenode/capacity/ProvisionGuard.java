package io.fastblock.namenode.capacity;

/**
 * Decides whether more bytes may be provisioned, given the cluster's provisioned total as read in
 * the same versioned step that will raise it (so two concurrent creates cannot both slip under the
 * limit: the loser's transaction fails on the counter's version and asks again).
 */
@FunctionalInterface
public interface ProvisionGuard {
    /** Admits everything (stores used without a capacity limit, tests). */
    ProvisionGuard NONE = (provisioned, more) -> {
    };

    /** @throws InsufficientCapacityException to refuse {@code more} bytes on top of {@code provisioned} */
    void admit(long provisioned, long more);
}
