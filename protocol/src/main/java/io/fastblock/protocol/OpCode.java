package io.fastblock.protocol;

/** Storage protocol operations. A response carries its request's op code with {@link #RESPONSE_BIT} set. */
public enum OpCode {
    PING(1),
    WRITE(2),
    READ(3),
    /** A joining replica asks the tail which chunks of a group it holds (and how long they are). */
    CHUNK_LIST(4),
    /** A joining replica copies a range of a chunk from the tail's copy, outside the lease fence. */
    COPY_READ(5),
    /** Which ranges of a chunk are allocated on the receiving replica ({@link Extents}). */
    EXTENTS(6),
    /** Raise (or seal) a volume id's lease-epoch floor on the receiving server. */
    FENCE(7),
    /** A returning replica asks the tail which ranges of a chunk changed above a sequence ({@link ChunkChanges}). */
    CHANGES(8),
    /** The connection takes the direct answers for a client id ({@link AnswerToRequest}). */
    ANSWER_TO(9);

    public static final int RESPONSE_BIT = 0x80;

    private final int code;

    OpCode(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    public static OpCode fromCode(int code) {
        for (OpCode op : values()) {
            if (op.code == code) {
                return op;
            }
        }
        throw new ProtocolException("unknown op code " + code);
    }
}
