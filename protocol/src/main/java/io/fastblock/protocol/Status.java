package io.fastblock.protocol;

/** Outcome of a storage request, as carried on the wire. Codes are stable: never renumber. */
public enum Status {
    OK(0),
    /** The request's chain version is not the group's current one; refresh the chain and resend. */
    STALE_CHAIN(1),
    /** The request's lease epoch is older than one this node has seen for the volume (fencing). */
    STALE_EPOCH(2),
    /** This node is not a member of the request's replication group. */
    NOT_MEMBER(3),
    /** The group is unknown to this node. */
    UNKNOWN_GROUP(4),
    /** A disk or downstream failure; the write may be partially applied on some replicas. */
    IO_ERROR(5),
    /** The node has no space left for the write; nothing was written. */
    NO_SPACE(6),
    /** The request is malformed (bad offset, length, op). */
    BAD_REQUEST(7),
    /** A stored record failed its checksum. */
    CORRUPT(8),
    /** The node is overloaded or shutting down; retry later. */
    BUSY(9);

    private final int code;

    Status(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    public static Status fromCode(int code) {
        for (Status s : values()) {
            if (s.code == code) {
                return s;
            }
        }
        throw new ProtocolException("unknown status code " + code);
    }
}
