package io.fastblock.namenode.placement;

/** A chunk cannot be placed because no replication group has been formed yet. */
public class NoReplicationGroupsException extends RuntimeException {
    public NoReplicationGroupsException(int liveNodes) {
        super("no replication groups yet: " + liveNodes + " storage node(s) live, "
                + GroupLayout.REPLICAS + " needed to form the first groups");
    }
}
