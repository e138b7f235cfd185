package io.fastblock.protocol;

/**
 * Asks the receiving tail for the chunks of {@code chain.groupId()} it holds. Answered with a
 * {@link ChunkListing} as the response data. Sent by a node catching up as the group's joining
 * member, which names itself in {@code joiner}: the tail answers only once its own view of the
 * chain names that node as joining (from then on it forwards every write it orders to it, so
 * nothing written after the copy starts can miss the joiner). A resyncing member or a reader
 * that only wants lengths sends no joiner ({@code null}).
 */
public record ChunkListRequest(long requestId, ChainAddress chain, String joiner) implements StorageMessage {
    /** A node id on the wire is at most this many UTF-8 bytes. */
    public static final int MAX_JOINER_BYTES = 255;

    public ChunkListRequest {
        if (joiner != null && (joiner.isEmpty()
                || joiner.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > MAX_JOINER_BYTES)) {
            throw new IllegalArgumentException("joiner node id must be 1.." + MAX_JOINER_BYTES + " UTF-8 bytes: '" + joiner + "'");
        }
    }

    /** A listing that names no joiner (resync, lengths). */
    public ChunkListRequest(long requestId, ChainAddress chain) {
        this(requestId, chain, null);
    }

    @Override
    public OpCode op() {
        return OpCode.CHUNK_LIST;
    }
}
