package io.fastblock.protocol;

/**
 * Asks the receiving tail for the chunks of {@code chain.groupId()} it holds. Answered with a
 * {@link ChunkListing} as the response data. Sent by a node catching up as the group's joining member.
 */
public record ChunkListRequest(long requestId, ChainAddress chain) implements StorageMessage {
    @Override
    public OpCode op() {
        return OpCode.CHUNK_LIST;
    }
}
